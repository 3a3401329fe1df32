"""chunkpress as a zarr 3 codec (``zarr_format=3``): the numcodecs codec, wrapped the way zarr
wraps numcodecs' own codecs, under the name ``numcodecs.chunkpress``.

Registered through zarr's entry-point group ``zarr.codecs`` (``pip install
'chunkpress[numcodecs]'`` and zarr 3), so an array written with it opens anywhere chunkpress is
installed. Zarr 2 arrays (``zarr_format=2``) use the numcodecs codec itself.
"""

from __future__ import annotations

from zarr.codecs.numcodecs._codecs import _NumcodecsBytesBytesCodec


class ChunkpressZarrCodec(_NumcodecsBytesBytesCodec, codec_name="chunkpress"):
    """``ChunkpressZarrCodec(level=3)``; takes the numcodecs codec's parameters."""
