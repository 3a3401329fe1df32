"""Progress as a user sees it: a bar with percentage and ETA on a terminal, a plain periodic
line in a log, nothing with -q."""

import fcntl
import os
import select
import struct
import termios
import time

import pytest
from chunkpress import progress as progress_module
from chunkpress.cli import main
from chunkpress.progress import Progress
from support import read


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "alice.txt"
    path.write_bytes(read("alice29.txt"))
    return path


def test_a_log_gets_plain_lines_with_percentage_and_eta(tmp_path, text, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_SECONDS", 0.0)  # every update is due
    assert main(["train", str(text), "--scorer", "repair", "--max-rules", "400", "--rules", str(tmp_path / "r")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("train:")]
    assert lines and "\r" not in "".join(lines)
    assert "%" in lines[-1] and "/400" in lines[-1] and "<" in lines[-1]  # percentage, total, ETA
    assert "N=" in lines[-1] and "bits=" in lines[-1]


def test_quiet_silences_progress_and_summary(tmp_path, text, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_SECONDS", 0.0)
    assert main(["train", "-q", str(text), "--scorer", "repair", "--max-rules", "400", "--rules", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().err == ""


def test_a_short_job_in_a_log_prints_nothing(tmp_path, text, capsys):
    assert main(["compress", str(text), "--scorer", "repair", "--max-rules", "100", "-o", str(tmp_path / "a.cpz")]) == 0
    assert capsys.readouterr().err == ""


def test_a_terminal_gets_a_bar_with_percentage_and_eta():
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal of 100 columns
    with open(slave, "w") as tty:
        with Progress("blocks", 1000, unit="B", stream=tty) as bar:
            for done in range(0, 1001, 250):
                time.sleep(0.3)  # tqdm redraws at most 4 times a second
                bar.update(done, blocks=done // 250)
            bar.write("a row of its own")
    shown = b""
    while select.select([master], [], [], 5)[0]:  # a pty hands its output over in pieces
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the terminal side is closed and everything has been read
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    shown = shown.decode()
    assert all(part in shown for part in ("blocks:", "50%", "75%", "blocks=3", "a row of its own", "\r"))


def test_block_mode_reports_bytes_of_the_input(tmp_path, text, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_SECONDS", 0.0)
    archive = tmp_path / "a.cpz"
    assert main(["compress", str(text), "--block-size", "40K", "--scorer", "repair", "-o", str(archive)]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("compress:")]
    assert lines[-1].startswith("compress: 100%") and "blocks=4" in lines[-1]
    assert main(["decompress", str(archive), "-o", str(tmp_path / "back")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("decompress:")]
    assert lines[-1].startswith("decompress: 100%") and "blocks=4" in lines[-1]
    assert (tmp_path / "back").read_bytes() == text.read_bytes()


def test_a_summary_line_ends_a_verbose_or_long_job_but_not_a_quiet_one(tmp_path, text, capsys, monkeypatch):
    archive = tmp_path / "a.cpz"
    args = [str(text), "--scorer", "repair", "--max-rules", "100", "--coder", "chunk-cm", "-o", str(archive)]
    assert main(["compress", "-v", *args]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    size = archive.stat().st_size
    assert line.startswith(f"{text}: 152,089 -> {size:,} bytes (") and "bits/byte) in " in line
    assert line.endswith(f" s -> {archive}")
    # a job as long as a progress line's interval gets a coding line and the summary in a log
    monkeypatch.setattr(progress_module, "LOG_SECONDS", 0.0)
    assert main(["decompress", "-f", str(archive), "-o", str(tmp_path / "back")]) == 0
    err = capsys.readouterr().err
    assert "decoding: 100%" in err and f"{archive}: {size:,} -> 152,089 bytes" in err
    assert main(["decompress", "-q", "-f", str(archive), "-o", str(tmp_path / "back")]) == 0
    assert capsys.readouterr().err == ""
