"""For the GPU batch only (bench/gpu/run-on-device.sh): numba-cuda 0.30.4 calls numpy.row_stack,
which numpy 2.5 removed; row_stack was an alias of vstack, so this puts the alias back before
numba-cuda is imported. Never part of the warpwatch package."""
import numpy

if not hasattr(numpy, "row_stack"):
    numpy.row_stack = numpy.vstack
