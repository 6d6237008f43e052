"""The `debezium-json` source's properties, declared (`connectors/properties.py`)."""

from __future__ import annotations

from ingest.connectors import common_properties as common
from ingest.connectors.properties import Field, FieldSet

FIELDS = FieldSet(
    Field("path", required=True, hint="a file or a directory of JSON lines",
          doc="the file or directory to read (relative to the configuration file)"),
    Field("file.glob", default="*", doc="directory mode: which file names to read (hidden files are skipped)"),
    common.TOPIC_PREFIX.but(required=False, pattern=None, pattern_meaning="",
                            doc="the Debezium topic prefix, used to name the tables of events without a source "
                                "block"),
    common.POLL_INTERVAL_MS.but(doc="how long to wait for new input when caught up (ms)"),
    *common.producer_type_modes(),
    Field("max.line.bytes", "int", default=64 * 1024 * 1024, minimum=1, doc="longer lines become rejects"),
)
