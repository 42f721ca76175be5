"""atheris fuzz target for the .cubex reader through the Python API.

Every mutated input must end in :class:`cubescale.FormatError` or in a report whose metrics
all load (and convert, unless a SCALE_FUNC sum needs more terms than CubeLib allows: then
OverflowError); any other exception is a finding. Run through ``fuzz/run_cube_fuzz.sh``, or::

    python3 fuzz/fuzz_cube_reader.py -max_total_time=30 CORPUS_DIR SEED_DIR
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import cubescale
    from cubescale._core import cube as _core


def test_one_input(data: bytes) -> None:
    try:
        report = _core.open_cubex_bytes(data, "fuzz")
        _core.load_all(report)
        wrapped = cubescale.Report(report)
        _ = wrapped.cnodes  # names the call paths: parses the regions, deferred at open
        for name, size in wrapped.extra_members:  # members that are not part of the report
            if len(wrapped.extra_member_bytes(name)) != size:
                raise AssertionError(f"extra member {name!r} is not {size} bytes")
        for metric in wrapped.metrics:
            try:
                values = wrapped.values(metric, inclusive=None)  # dtype views must fit the bytes
            except ValueError as e:  # a derived metric outside the CubePL subset: documented
                if not (metric.derived and str(e).startswith("derived metric")):
                    raise
                continue
            if wrapped.ignored_bytes(metric) < 0:
                raise AssertionError("negative ignored bytes")
            if values.nbytes < (16 << 20):
                try:
                    wrapped.values(metric, inclusive=True)
                except OverflowError:  # a SCALE_FUNC sum beyond CubeLib's 30 terms: documented
                    pass
    except cubescale.FormatError:
        pass


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
