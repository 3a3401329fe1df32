"""Comparative studies: grids of pipelines run, verified and tabulated (see :mod:`.runner`)."""
