"""chunkpress inside other libraries: a numcodecs codec, and a zarr 3 codec over it."""
