"""chunkpress as a zarr 3 codec (``zarr_format=3``), named ``chunkpress`` in array metadata.

A bytes-to-bytes codec over the numcodecs codec (same parameters: ``level``, ``scorer``,
``coder``, ...), registered through zarr's entry-point group ``zarr.codecs`` under the name
``chunkpress`` (``pip install 'chunkpress[numcodecs]'`` and zarr 3), so an array written with it
opens anywhere chunkpress is installed. Zarr 2 arrays (``zarr_format=2``) use the numcodecs
codec itself.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from zarr.abc.codec import BytesBytesCodec
from zarr.core.buffer.cpu import as_numpy_array_wrapper
from zarr.core.common import parse_named_configuration

from .numcodecs_codec import ChunkpressCodec

#: the codec's name in zarr metadata and in the ``zarr.codecs`` entry-point group
NAME = "chunkpress"


@dataclass(frozen=True)
class ChunkpressZarrCodec(BytesBytesCodec):
    """``ChunkpressZarrCodec(level=3)``; takes the numcodecs codec's parameters."""

    is_fixed_size = False
    configuration: dict

    def __init__(self, **configuration) -> None:
        configuration.pop("id", None)
        ChunkpressCodec(**configuration)  # checks the parameters now, not at the first chunk
        object.__setattr__(self, "configuration", configuration)

    @classmethod
    def from_dict(cls, data):
        _, configuration = parse_named_configuration(data, NAME, require_configuration=False)
        return cls(**(configuration or {}))

    def to_dict(self):
        return {"name": NAME, "configuration": dict(self.configuration)}

    @cached_property
    def _codec(self) -> ChunkpressCodec:
        return ChunkpressCodec(**self.configuration)

    async def _decode_single(self, chunk_bytes, chunk_spec):
        expected = _chunk_bytes(chunk_spec)
        decode = self._codec.decode if expected is None else (
            lambda buf: self._codec.decode(buf, np.empty(expected, dtype=np.uint8)))
        return await asyncio.to_thread(as_numpy_array_wrapper, decode, chunk_bytes, chunk_spec.prototype)

    async def _encode_single(self, chunk_bytes, chunk_spec):
        return await asyncio.to_thread(as_numpy_array_wrapper, self._codec.encode, chunk_bytes, chunk_spec.prototype)

    def compute_encoded_size(self, _input_byte_length, _chunk_spec):
        raise NotImplementedError


def _chunk_bytes(chunk_spec) -> int | None:
    """How many bytes a chunk of this spec holds, where its data type has a fixed size (a
    chunk's archive that claims more is refused before decoding); None where it cannot tell."""
    try:
        dtype = chunk_spec.dtype
        dtype = dtype.to_native_dtype() if hasattr(dtype, "to_native_dtype") else np.dtype(dtype)
        if dtype.hasobject or dtype.itemsize == 0:
            return None
        return int(np.prod(chunk_spec.shape)) * dtype.itemsize
    except (AttributeError, TypeError, ValueError):
        return None
