"""The bundled demo application of ``cubescale demo``: :mod:`cubescale.demo.stencil`."""
