package lakecdc;

import io.debezium.embedded.EmbeddedEngineChangeEvent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;

/**
 * The embedded engine's records decoded into bronze's event columns, in Java (no per-record Python): the same
 * rows ingest/connectors/debezium_json/records.py (Decoder) makes of the same records, which the tests check row by
 * row. Compiled at run time by Janino (ingest/connectors/debezium_engine/decoding.py); Janino erases generics, so
 * collections are read with casts.
 *
 * decode() takes records in order until one it leaves to the Python decoder: schema change events (their
 * seq needs the decoder's schema change state), anything on the schema change topic, and whatever this class is
 * not sure to decode exactly as Python would (an unusual type or value: Python decodes it, or rejects it with its
 * reason). The state the two share (the main seq of the last positioned event, each topic's table) is handed
 * across at those records (setMain, main, topicTable, noteTopicTable).
 */
public final class EventColumns {

    /** Thrown where Python's decoder must take the record. */
    private static final class Bail extends RuntimeException {
        Bail() { super(null, null, false, false); }
    }

    private static final Bail BAIL = new Bail();
    private static final int MAX_DIGITS = 18;   // decimal texts longer than this go to Python (they may not fit a long)

    private final String topicPrefix;
    private final String schemaTopic;
    private final boolean nullsAsDefaults;    // JsonConverter replaces a null with the field's default
    private final JsonConverter converter;   // its schema JSON (schemaJson)
    private final Converter keyConverter, valueConverter;   // the key and value texts (JsonConverter's bytes)
    private final IdentityHashMap numbers = new IdentityHashMap();   // Schema -> Integer
    private final ArrayList schemas = new ArrayList();               // number -> Schema
    private final HashMap topicTables = new HashMap();               // topic -> table_id
    private final IdentityHashMap fieldsBySchema = new IdentityHashMap();   // Schema -> Field[] (ENVELOPE or SOURCE)
    private final StringBuilder seqText = new StringBuilder(96);
    private final Blake2b64 hash = new Blake2b64();
    private String main;
    private String lastDb, lastSchemaName, lastTable, lastTableId;   // sourceTable(): the last one

    // the fields read of an envelope and of its source block, looked up once per schema
    private static final String[] ENVELOPE = {"op", "ts_ms", "source", "transaction", "status", "id", "ddl",
                                              "tableChanges"};
    private static final int OP = 0, TS = 1, SOURCE = 2, TRANSACTION = 3, STATUS = 4, ID = 5, DDL = 6,
        TABLE_CHANGES = 7;
    private static final String[] SOURCE_FIELDS = {"connector", "ts_ms", "snapshot", "table", "collection", "db",
        "schema", "txId", "gtid", "txnNumber", "sequence", "lsn", "file", "pos", "row", "commit_lsn", "change_lsn",
        "event_serial_no", "scn", "commit_scn", "ssn", "ord"};
    private static final int CONNECTOR = 0, SOURCE_TS = 1, SNAPSHOT = 2, TABLE = 3, COLLECTION = 4, DB = 5,
        SCHEMA = 6, TX_ID = 7, GTID = 8, TXN_NUMBER = 9, SEQUENCE = 10, LSN = 11, FILE = 12, POS = 13, ROW = 14,
        COMMIT_LSN = 15, CHANGE_LSN = 16, EVENT_SERIAL_NO = 17, SCN = 18, COMMIT_SCN = 19, SSN = 20, ORD = 21;
    private static final String[] TRANSACTION_FIELDS = {"id"};

    // the rows decoded since the last take(), column by column (bronze's event columns, then three of ours)
    private final Texts topic = new Texts(), tableId = new Texts(), op = new Texts(), seq = new Texts(),
        key = new Texts(), value = new Texts(), txnId = new Texts(), snapshot = new Texts();
    private final Longs tsMs = new Longs(), sourceTsMs = new Longs();
    private final Ints at = new Ints(), keyNumber = new Ints(), valueNumber = new Ints();
    private int rows;

    /** `keyConverter`, `valueConverter`: write a record's key and value as the engine's JsonConverter would (the
     *  engine hands records over unconverted: their conversion is part of the hand-over, decoding.py). */
    public EventColumns(String topicPrefix, String schemaTopic, Map converterConfig, Converter keyConverter,
                        Converter valueConverter) {
        this.keyConverter = keyConverter;
        this.valueConverter = valueConverter;
        this.topicPrefix = topicPrefix;
        this.schemaTopic = schemaTopic;
        HashMap config = new HashMap(converterConfig);
        config.put("schemas.enable", "true");
        Object replace = config.get("replace.null.with.default");
        this.nullsAsDefaults = replace == null || "true".equalsIgnoreCase(String.valueOf(replace).trim());
        this.converter = new JsonConverter();
        this.converter.configure(config, false);
    }

    // -- the state shared with the Python decoder ------------------------------------------------------------
    public void setMain(String main) { this.main = main; }

    public String main() { return main; }

    public String topicTable(String topic) { return (String) topicTables.get(topic); }

    public void noteTopicTable(String topic, String table) { topicTables.put(topic, table); }

    // -- schemas -----------------------------------------------------------------------------------------------
    /** How many schemas are numbered; schemaJson(n) is JsonConverter's `schema` part of the n-th. */
    public int schemaCount() { return schemas.size(); }

    public String schemaJson(int number) {
        return converter.asJsonSchema((Schema) schemas.get(number)).toString();
    }

    private int number(Schema schema) {
        if (schema == null) {
            return -1;
        }
        Integer known = (Integer) numbers.get(schema);
        if (known == null) {
            known = Integer.valueOf(schemas.size());
            numbers.put(schema, known);
            schemas.add(schema);
        }
        return known.intValue();
    }

    // -- a record as the Python decoder takes it -----------------------------------------------------------
    /** topic, key schema JSON, key JSON, value schema JSON, value JSON (null where absent). */
    public String[] texts(List records, int index) {
        EmbeddedEngineChangeEvent event = (EmbeddedEngineChangeEvent) records.get(index);
        SourceRecord record = (SourceRecord) event.sourceRecord();
        return new String[] {record.topic(), schemaText(record.keySchema()), text(keyBytes(record)),
                             schemaText(record.valueSchema()), text(valueBytes(record))};
    }

    private String schemaText(Schema schema) {
        return schema == null ? null : converter.asJsonSchema(schema).toString();
    }

    private static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private byte[] keyBytes(SourceRecord record) {
        return bytes(keyConverter.fromConnectData(record.topic(), record.keySchema(), record.key()));
    }

    private byte[] valueBytes(SourceRecord record) {
        return bytes(valueConverter.fromConnectData(record.topic(), record.valueSchema(), record.value()));
    }

    private static byte[] bytes(byte[] bytes) {
        return bytes == null || bytes.length == 0 ? null : bytes;
    }

    // -- decoding ------------------------------------------------------------------------------------------------
    /** Decodes records[from, until) into the columns until one is left to Python; returns its index (or until). */
    public int decode(List records, int from, int until) {
        for (int index = from; index < until; index++) {
            try {
                if (!decodeOne((EmbeddedEngineChangeEvent) records.get(index), index)) {
                    return index;
                }
            } catch (RuntimeException unsure) {   // Bail, or anything unforeseen: Python decodes it (or rejects it)
                return index;
            }
        }
        return until;
    }

    private boolean decodeOne(EmbeddedEngineChangeEvent event, int index) {
        SourceRecord record = (SourceRecord) event.sourceRecord();
        String topicName = record.topic();
        if (topicName.equals(schemaTopic)) {
            return false;
        }
        byte[] keyBytes = keyBytes(record);
        byte[] valueBytes = valueBytes(record);
        int keyNo = number(record.keySchema());
        if (valueBytes == null || isNullText(valueBytes)) {   // a tombstone, hashed like its delete
            inherited(topicName, keyBytes, null);
            add(index, topicName, topicTableOf(topicName), null, keyBytes, null, keyNo, -1, null, null, null, null);
            return true;
        }
        if (!(record.value() instanceof Struct)) {
            return false;
        }
        Struct envelope = (Struct) record.value();
        Field[] fields = fields(envelope.schema(), ENVELOPE);
        Long ts = integer(envelope, fields[TS]);
        Object sourceValue = get(envelope, fields[SOURCE]);
        if (sourceValue != null && !(sourceValue instanceof Struct)) {
            return false;
        }
        Struct source = (Struct) sourceValue;
        Field[] at = source == null ? null : fields(source.schema(), SOURCE_FIELDS);
        Long sourceTs = source == null ? null : integer(source, at[SOURCE_TS]);
        int valueNo = number(record.valueSchema());
        if (fields[OP] != null) {
            Object opValue = get(envelope, fields[OP]);
            if (!isOp(opValue)) {
                return false;
            }
            String table = source == null ? null : sourceTable(source, at);
            if (table == null) {
                table = topicTableOf(topicName);
            }
            StringBuilder text = seqText;
            text.setLength(0);
            mainSeq(text, source, at, ts);
            int mainLength = text.length();
            text.append('-');
            hash.reset();
            hash.update(topicName);
            hash.update((byte) 0);
            hash.update(keyBytes);
            hash.appendHex(text);
            text.append("-0");
            String snapshotText = source == null ? null : optText(get(source, at[SNAPSHOT]));
            String txn = txnId(envelope, fields, source, at);
            topicTables.put(topicName, table);
            main = text.substring(0, mainLength);
            add(index, topicName, table, (String) opValue, keyBytes, valueBytes, keyNo, valueNo, ts, sourceTs, txn,
                snapshotText);
            return true;
        }
        if (fields[DDL] != null || fields[TABLE_CHANGES] != null) {
            return false;   // a schema change event: the Python decoder keeps their order
        }
        // heartbeat, transaction metadata or another connector message: kept as it is, after the last position
        String txn = null;
        Object status = get(envelope, fields[STATUS]);
        if ("BEGIN".equals(status) || "END".equals(status)) {
            txn = optText(get(envelope, fields[ID]));
        }
        inherited(topicName, keyBytes, valueBytes);
        add(index, topicName, topicName, null, keyBytes, valueBytes, keyNo, valueNo, ts, null, txn, null);
        return true;
    }

    /** seqText of an event without a position of its own: the last main seq, its hash, kind 1. */
    private void inherited(String topicName, byte[] keyBytes, byte[] valueBytes) {
        StringBuilder text = seqText;
        text.setLength(0);
        text.append(main).append('-');
        hash.reset();
        hash.update(topicName);
        hash.update((byte) 0);
        hash.update(keyBytes);
        if (valueBytes != null) {
            hash.update((byte) 0);
            hash.update(valueBytes);
        }
        hash.appendHex(text);
        text.append("-1");
    }

    private static boolean isNullText(byte[] bytes) {
        return bytes.length == 4 && bytes[0] == 'n' && bytes[1] == 'u' && bytes[2] == 'l' && bytes[3] == 'l';
    }

    private static boolean isOp(Object value) {
        return "c".equals(value) || "u".equals(value) || "d".equals(value) || "r".equals(value) || "t".equals(value)
            || "m".equals(value);
    }

    // -- fields as the JSON holds them ---------------------------------------------------------------------------
    /** The schema's fields of the given names (null where it has none), looked up once per schema. */
    private Field[] fields(Schema schema, String[] names) {
        Field[] found = (Field[]) fieldsBySchema.get(schema);
        if (found == null) {
            found = new Field[names.length];
            for (int i = 0; i < names.length; i++) {
                found[i] = schema.field(names[i]);
            }
            fieldsBySchema.put(schema, found);
        }
        return found;
    }

    /** The field's value as JsonConverter writes it (null when the schema has no such field). */
    private Object get(Struct struct, Field field) {
        if (field == null) {
            return null;
        }
        Object value = struct.get(field);   // a null replaced by the field's default, if it has one
        if (value != null && !nullsAsDefaults && field.schema().defaultValue() != null) {
            value = struct.getWithoutDefault(field.name());
        }
        return value;
    }

    /** An integer field (records.py: an int, None, else _opt_int's conversion, left to Python). */
    private Long integer(Struct struct, Field field) {
        Object value = get(struct, field);
        if (value == null) {
            return null;
        }
        if (value instanceof Long) {
            return (Long) value;
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return Long.valueOf(((Number) value).longValue());
        }
        throw BAIL;
    }

    /** records.py _opt_str. */
    private static String optText(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof Boolean) {
            return ((Boolean) value).booleanValue() ? "true" : "false";
        }
        return strOf(value);
    }

    /** Python's str() of a text or an integer. */
    private static String strOf(Object value) {
        if (value instanceof String) {
            return (String) value;
        }
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return String.valueOf(((Number) value).longValue());
        }
        throw BAIL;
    }

    private String txnId(Struct envelope, Field[] fields, Struct source, Field[] at) {
        Object transaction = get(envelope, fields[TRANSACTION]);
        if (transaction instanceof Struct) {
            Struct block = (Struct) transaction;
            Object id = get(block, fields(block.schema(), TRANSACTION_FIELDS)[0]);
            if (id != null) {
                return strOf(id);
            }
        }
        if (source != null) {
            Object found = get(source, at[TX_ID]);
            if (found == null) {
                found = get(source, at[GTID]);
            }
            if (found == null) {
                found = get(source, at[TXN_NUMBER]);
            }
            if (found != null) {
                return strOf(found);
            }
        }
        return null;
    }

    // -- names ---------------------------------------------------------------------------------------------------
    private String sourceTable(Struct source, Field[] at) {
        String table = nonEmpty(get(source, at[TABLE]));
        if (table == null) {
            table = nonEmpty(get(source, at[COLLECTION]));
        }
        if (table == null) {
            return null;
        }
        String db = nonEmpty(get(source, at[DB]));
        String schemaName = nonEmpty(get(source, at[SCHEMA]));
        if (table.equals(lastTable) && equal(db, lastDb) && equal(schemaName, lastSchemaName)) {
            return lastTableId;
        }
        StringBuilder out = new StringBuilder();
        if (db != null) {
            out.append(db).append('.');
        }
        if (schemaName != null) {
            out.append(schemaName).append('.');
        }
        lastDb = db;
        lastSchemaName = schemaName;
        lastTable = table;
        lastTableId = out.append(table).toString();
        return lastTableId;
    }

    private static boolean equal(String one, String other) {
        return one == null ? other == null : one.equals(other);
    }

    /** A text field that is not empty, else null (Python: falsy); other types go to Python. */
    private static String nonEmpty(Object value) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof String)) {
            throw BAIL;
        }
        String text = (String) value;
        return text.isEmpty() ? null : text;
    }

    private String topicTableOf(String topicName) {
        String known = (String) topicTables.get(topicName);
        if (known != null && !known.isEmpty()) {
            return known;
        }
        if (topicPrefix != null && !topicPrefix.isEmpty() && topicName.startsWith(topicPrefix + ".")) {
            return topicName.substring(topicPrefix.length() + 1);
        }
        return topicName;
    }

    // -- the main seq (seq.py) -------------------------------------------------------------------------------------
    /** Appends the main seq of an event to `out`. */
    private void mainSeq(StringBuilder out, Struct source, Field[] at, Long envelopeTs) {
        long ts;
        if (source != null) {
            Object connector = get(source, at[CONNECTOR]);
            boolean found = false;
            if ("postgresql".equals(connector)) {
                found = postgres(out, source, at);
            } else if ("mysql".equals(connector) || "mariadb".equals(connector)) {
                found = mysql(out, source, at);
            } else if ("sqlserver".equals(connector)) {
                found = sqlserver(out, source, at);
            } else if ("oracle".equals(connector)) {
                found = oracle(out, source, at);
            } else if ("mongodb".equals(connector)) {
                found = mongodb(out, source, at);
            }
            if (found) {
                return;
            }
            ts = at[SOURCE_TS] != null ? intOf(get(source, at[SOURCE_TS])) : intOf(envelopeTs);
        } else {
            ts = intOf(envelopeTs);
        }
        hex(out, ts, 16);
        out.append('-');
        hex(out, 0, 16);
    }

    private boolean postgres(StringBuilder out, Struct source, Field[] at) {
        Object sequence = get(source, at[SEQUENCE]);
        if (sequence != null && !(sequence instanceof String)) {
            throw BAIL;
        }
        if (sequence != null && !((String) sequence).isEmpty()) {
            String text = (String) sequence;   // `["123","456"]`, `[null,"456"]`; any other text goes to Python
            int length = text.length();
            int comma = text.indexOf(',');
            if (length < 5 || text.charAt(0) != '[' || text.charAt(length - 1) != ']' || comma < 0) {
                throw BAIL;
            }
            hex(out, sequenceItem(text, 1, comma), 16);
            out.append('-');
            hex(out, sequenceItem(text, comma + 1, length - 1), 16);
            return true;
        }
        Object lsn = get(source, at[LSN]);
        if (lsn != null) {
            hex(out, 0, 16);
            out.append('-');
            hex(out, intOf(lsn), 16);
            return true;
        }
        return false;
    }

    /** text[start, end): null, "digits" or digits. */
    private static long sequenceItem(String text, int start, int end) {
        if (end - start == 4 && text.startsWith("null", start)) {
            return 0;
        }
        if (end - start >= 2 && text.charAt(start) == '"' && text.charAt(end - 1) == '"') {
            return end - start == 2 ? 0 : digits(text, start + 1, end - 1);
        }
        return digits(text, start, end);
    }

    private boolean mysql(StringBuilder out, Struct source, Field[] at) {
        Object file = get(source, at[FILE]);
        Object pos = get(source, at[POS]);
        if (file == null || pos == null) {
            return false;
        }
        if (!(file instanceof String)) {
            throw BAIL;
        }
        String name = (String) file;
        int dot = name.lastIndexOf('.') + 1;
        hex(out, name.isEmpty() ? 0 : dot == name.length() ? 0 : digits(name, dot, name.length()), 16);
        out.append('-');
        hex(out, intOf(pos), 16);
        out.append('-');
        hex(out, intOf(get(source, at[ROW])), 16);
        return true;
    }

    private boolean sqlserver(StringBuilder out, Struct source, Field[] at) {
        Object commit = get(source, at[COMMIT_LSN]);
        Object change = get(source, at[CHANGE_LSN]);
        if (!truthy(commit) && !truthy(change)) {
            return false;
        }
        lsn(out, commit);
        out.append('-');
        lsn(out, change);
        out.append('-');
        hex(out, intOf(get(source, at[EVENT_SERIAL_NO])), 8);
        return true;
    }

    /** `00000027:00000758:0005` as 20 lowercase hex digits (80 bits). */
    private static void lsn(StringBuilder out, Object value) {
        if (!truthy(value)) {
            hex(out, 0, 20);
            return;
        }
        if (!(value instanceof String)) {
            throw BAIL;
        }
        String text = ((String) value).replace(":", "");
        if (text.isEmpty()) {
            throw BAIL;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
                throw BAIL;
            }
        }
        int start = 0;
        while (start < text.length() - 1 && text.charAt(start) == '0') {
            start++;
        }
        String significant = text.substring(start).toLowerCase();
        if (significant.length() > 20) {
            throw BAIL;
        }
        out.append(ZEROS, 0, 20 - significant.length()).append(significant);
    }

    private boolean oracle(StringBuilder out, Struct source, Field[] at) {
        Object scnValue = get(source, at[SCN]);
        Object commitValue = get(source, at[COMMIT_SCN]);
        if (scnValue == null && commitValue == null) {
            return false;
        }
        long scn = intOf(scnValue);
        hex(out, truthy(commitValue) ? intOf(commitValue) : scn, 16);
        out.append('-');
        hex(out, scn, 16);
        out.append('-');
        hex(out, intOf(get(source, at[SSN])), 8);
        return true;
    }

    private boolean mongodb(StringBuilder out, Struct source, Field[] at) {
        Object ts = get(source, at[SOURCE_TS]);
        Object ord = get(source, at[ORD]);
        if (ts == null || ord == null) {
            return false;
        }
        hex(out, intOf(ts), 16);
        out.append('-');
        hex(out, intOf(ord), 8);
        return true;
    }

    /** Python's truth of a text or a number; other types go to Python. */
    private static boolean truthy(Object value) {
        if (value == null) {
            return false;
        }
        if (value instanceof String) {
            return !((String) value).isEmpty();
        }
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue() != 0;
        }
        throw BAIL;
    }

    /** seq.py _int: an integer, a decimal text (empty: 0) or null (0). */
    private static long intOf(Object value) {
        if (value == null) {
            return 0;
        }
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof String) {
            String text = (String) value;
            return text.isEmpty() ? 0 : digits(text, 0, text.length());
        }
        throw BAIL;
    }

    /** text[start, end) of ASCII digits only (anything else, e.g. a sign or spaces, goes to Python). */
    private static long digits(String text, int start, int end) {
        if (end <= start || end - start > MAX_DIGITS) {
            throw BAIL;
        }
        long result = 0;
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw BAIL;
            }
            result = result * 10 + (c - '0');
        }
        return result;
    }

    private static final String ZEROS = "00000000000000000000";
    private static final char[] HEX_DIGITS = "0123456789abcdef".toCharArray();

    /** Appends fixed-width lowercase hex; a value that does not fit (or is negative) goes to Python, which rejects
     * it. */
    private static void hex(StringBuilder out, long value, int width) {
        if (value < 0 || (width < 16 && (value >>> (4 * width)) != 0)) {
            throw BAIL;
        }
        if (width > 16) {   // a long has 16 hex digits at most
            out.append(ZEROS, 0, width - 16);
            width = 16;
        }
        for (int shift = 4 * (width - 1); shift >= 0; shift -= 4) {
            out.append(HEX_DIGITS[(int) (value >>> shift) & 0xf]);
        }
    }

    // -- the columns -----------------------------------------------------------------------------------------------
    private void add(int index, String topicName, String table, String opText, byte[] keyBytes, byte[] valueBytes,
                     int keyNo, int valueNo, Long ts, Long sourceTs, String txn, String snapshotText) {
        topic.addCached(topicName);
        tableId.addCached(table);
        op.addCached(opText);
        seq.addAscii(seqText);
        key.add(keyBytes);
        value.add(valueBytes);
        tsMs.add(ts);
        sourceTsMs.add(sourceTs);
        txnId.add(txn);
        snapshot.addCached(snapshotText);
        at.add(index);
        keyNumber.add(keyNo);
        valueNumber.add(valueNo);
        rows++;
    }

    /**
     * The rows decoded since the last take(), and forgets them: one byte array, little-endian. An int32 row count,
     * then the buffers in this order, each starting at a multiple of 8: per text column (topic, table_id, op, seq,
     * key, value, txn_id, snapshot) its validity bitmap, int32 offsets and UTF-8 data; per integer column (ts_ms,
     * source_ts_ms) its validity bitmap and int64 values; then int32 values of `at` (the record's index in its
     * batch), `key_schema` and `value_schema` (schema numbers, -1: none). Before them, the int32 length of each.
     */
    public byte[] take() {
        Texts[] texts = {topic, tableId, op, seq, key, value, txnId, snapshot};
        ArrayList buffers = new ArrayList();
        for (int i = 0; i < texts.length; i++) {
            texts[i].buffers(rows, buffers);
        }
        tsMs.buffers(rows, buffers);
        sourceTsMs.buffers(rows, buffers);
        at.buffers(rows, buffers);
        keyNumber.buffers(rows, buffers);
        valueNumber.buffers(rows, buffers);
        int headerSize = align(4 + 4 * buffers.size());
        int total = headerSize;
        for (int i = 0; i < buffers.size(); i++) {
            total += align(((Buffer) buffers.get(i)).length);
        }
        ByteBuffer out = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(rows);
        for (int i = 0; i < buffers.size(); i++) {
            out.putInt(((Buffer) buffers.get(i)).length);
        }
        out.position(headerSize);
        for (int i = 0; i < buffers.size(); i++) {
            Buffer buffer = (Buffer) buffers.get(i);
            out.put(buffer.data, 0, buffer.length);
            out.position(out.position() + align(buffer.length) - buffer.length);
        }
        for (int i = 0; i < texts.length; i++) {
            texts[i].clear();
        }
        tsMs.clear();
        sourceTsMs.clear();
        at.clear();
        keyNumber.clear();
        valueNumber.clear();
        rows = 0;
        return out.array();
    }

    private static int align(int length) {
        return (length + 7) & ~7;
    }

    private static final class Buffer {
        final byte[] data;
        final int length;

        Buffer(byte[] data, int length) {
            this.data = data;
            this.length = length;
        }
    }

    /** A validity bitmap (Arrow's: bit i of byte i/8, least significant first). */
    private static final class Validity {
        byte[] bits = new byte[256];

        void set(int row, boolean valid) {
            int at = row >> 3;
            if (at >= bits.length) {
                byte[] grown = new byte[Math.max(bits.length * 2, at + 1)];
                System.arraycopy(bits, 0, grown, 0, bits.length);
                bits = grown;
            }
            if (valid) {
                bits[at] |= (byte) (1 << (row & 7));
            } else {
                bits[at] &= (byte) ~(1 << (row & 7));
            }
        }

        Buffer buffer(int rows) {
            return new Buffer(bits, (rows + 7) >> 3);
        }

        void clear() {
            java.util.Arrays.fill(bits, (byte) 0);
        }
    }

    private static final class Texts {
        final Validity validity = new Validity();
        final HashMap cache = new HashMap();   // addCached: text -> its UTF-8 bytes
        byte[] data = new byte[1 << 16];
        int length;
        int[] offsets = new int[1025];
        int size;

        /** A text of few distinct values (a topic, a table, an op). */
        void addCached(String text) {
            if (text == null) {
                add((byte[]) null);
                return;
            }
            byte[] bytes = (byte[]) cache.get(text);
            if (bytes == null) {
                if (cache.size() >= 10000) {
                    cache.clear();
                }
                bytes = text.getBytes(StandardCharsets.UTF_8);
                cache.put(text, bytes);
            }
            add(bytes);
        }

        void add(String text) {
            add(text == null ? null : text.getBytes(StandardCharsets.UTF_8));
        }

        /** A text of ASCII characters only (a seq). */
        void addAscii(CharSequence text) {
            int count = text.length();
            room(count);
            for (int i = 0; i < count; i++) {
                data[length + i] = (byte) text.charAt(i);
            }
            length += count;
            next(true);
        }

        void add(byte[] bytes) {
            if (bytes != null) {
                room(bytes.length);
                System.arraycopy(bytes, 0, data, length, bytes.length);
                length += bytes.length;
            }
            next(bytes != null);
        }

        private void room(int count) {
            if (length + count > data.length) {
                byte[] grown = new byte[Math.max(data.length * 2, length + count)];
                System.arraycopy(data, 0, grown, 0, length);
                data = grown;
            }
        }

        private void next(boolean valid) {
            validity.set(size, valid);
            if (size + 2 > offsets.length) {
                int[] grown = new int[offsets.length * 2];
                System.arraycopy(offsets, 0, grown, 0, offsets.length);
                offsets = grown;
            }
            size++;
            offsets[size] = length;
        }

        void buffers(int rows, List out) {
            out.add(validity.buffer(rows));
            ByteBuffer packed = ByteBuffer.allocate(4 * (rows + 1)).order(ByteOrder.LITTLE_ENDIAN);
            packed.asIntBuffer().put(offsets, 0, rows + 1);
            out.add(new Buffer(packed.array(), 4 * (rows + 1)));
            out.add(new Buffer(data, length));
        }

        void clear() {
            length = 0;
            size = 0;
            validity.clear();
        }
    }

    private static final class Longs {
        final Validity validity = new Validity();
        long[] values = new long[1024];
        int size;

        void add(Long value) {
            if (size == values.length) {
                long[] grown = new long[values.length * 2];
                System.arraycopy(values, 0, grown, 0, values.length);
                values = grown;
            }
            validity.set(size, value != null);
            values[size++] = value == null ? 0 : value.longValue();
        }

        void buffers(int rows, List out) {
            out.add(validity.buffer(rows));
            ByteBuffer packed = ByteBuffer.allocate(8 * rows).order(ByteOrder.LITTLE_ENDIAN);
            packed.asLongBuffer().put(values, 0, rows);
            out.add(new Buffer(packed.array(), 8 * rows));
        }

        void clear() {
            size = 0;
            validity.clear();
        }
    }

    private static final class Ints {
        int[] values = new int[1024];
        int size;

        void add(int value) {
            if (size == values.length) {
                int[] grown = new int[values.length * 2];
                System.arraycopy(values, 0, grown, 0, values.length);
                values = grown;
            }
            values[size++] = value;
        }

        void buffers(int rows, List out) {
            ByteBuffer packed = ByteBuffer.allocate(4 * rows).order(ByteOrder.LITTLE_ENDIAN);
            packed.asIntBuffer().put(values, 0, rows);
            out.add(new Buffer(packed.array(), 4 * rows));
        }

        void clear() {
            size = 0;
        }
    }

    /**
     * BLAKE2b (RFC 7693) with an 8-byte digest, unkeyed: seq.py's tiebreak, hashlib.blake2b(digest_size=8) of the
     * topic, a NUL and the key text (and, for a message without a position, a NUL and the value text). Fed in parts
     * (reset, update..., appendHex); one instance per decoder, its arrays reused.
     */
    public static final class Blake2b64 {
        private static final long[] IV = {
            0x6a09e667f3bcc908L, 0xbb67ae8584caa73bL, 0x3c6ef372fe94f82bL, 0xa54ff53a5f1d36f1L,
            0x510e527fade682d1L, 0x9b05688c2b3e6c1fL, 0x1f83d9abfb41bd6bL, 0x5be0cd19137e2179L};
        private static final byte[][] SIGMA = {
            {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
            {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
            {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
            {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
            {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
            {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
            {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
            {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
            {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
            {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0}};

        private final long[] h = new long[8];
        private final long[] m = new long[16];
        private final byte[] block = new byte[128];
        private final ByteBuffer words = ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN);   // block as 16 longs
        private int filled;      // bytes in `block`
        private long counter;    // bytes compressed so far

        /** The digest of `input` as a long (its 8 little-endian bytes are hashlib's digest). */
        public static long hash(byte[] input) {
            Blake2b64 hash = new Blake2b64();
            hash.reset();
            hash.update(input);
            return hash.finish();
        }

        public void reset() {
            System.arraycopy(IV, 0, h, 0, 8);
            h[0] ^= 0x01010000L ^ 8;   // digest length 8, no key, fanout 1, depth 1
            filled = 0;
            counter = 0;
        }

        public void update(byte one) {
            if (filled == 128) {   // the last block is compressed only once more input comes
                counter += 128;
                compress(false);
                filled = 0;
            }
            block[filled++] = one;
        }

        public void update(byte[] input) {
            if (input == null) {
                return;
            }
            int offset = 0;
            while (offset < input.length) {
                if (filled == 128) {
                    counter += 128;
                    compress(false);
                    filled = 0;
                }
                int count = Math.min(128 - filled, input.length - offset);
                System.arraycopy(input, offset, block, filled, count);
                filled += count;
                offset += count;
            }
        }

        /** A text's UTF-8 bytes (ASCII directly). */
        public void update(String text) {
            for (int i = 0; i < text.length(); i++) {
                if (text.charAt(i) >= 0x80) {
                    update(text.getBytes(StandardCharsets.UTF_8));
                    return;
                }
            }
            for (int i = 0; i < text.length(); i++) {
                update((byte) text.charAt(i));
            }
        }

        public long finish() {
            counter += filled;
            for (int i = filled; i < 128; i++) {
                block[i] = 0;
            }
            compress(true);
            return h[0];
        }

        /** finish(), appended as 16 hex digits (the digest's bytes in order). */
        public void appendHex(StringBuilder out) {
            long digest = finish();
            for (int i = 0; i < 8; i++) {
                int b = (int) (digest >>> (8 * i)) & 0xff;
                out.append(HEX_DIGITS[b >>> 4]).append(HEX_DIGITS[b & 0xf]);
            }
        }

        // the state in locals, not in arrays: the JIT keeps them in registers (about 3x faster than the
        // array version; every record hashes at least one block)
        private void compress(boolean last) {
            long[] w = m;
            for (int i = 0; i < 16; i++) {
                w[i] = words.getLong(8 * i);
            }
            long v0 = h[0], v1 = h[1], v2 = h[2], v3 = h[3], v4 = h[4], v5 = h[5], v6 = h[6], v7 = h[7];
            long v8 = IV[0], v9 = IV[1], v10 = IV[2], v11 = IV[3], v12 = IV[4] ^ counter, v13 = IV[5];
            long v14 = last ? ~IV[6] : IV[6], v15 = IV[7];   // the counter's high word stays 0: inputs are far below 2^64 bytes
            for (int round = 0; round < 12; round++) {
                byte[] s = SIGMA[round % 10];
                v0 += v4 + w[s[0]]; v12 = Long.rotateRight(v12 ^ v0, 32); v8 += v12; v4 = Long.rotateRight(v4 ^ v8, 24);
                v0 += v4 + w[s[1]]; v12 = Long.rotateRight(v12 ^ v0, 16); v8 += v12; v4 = Long.rotateRight(v4 ^ v8, 63);
                v1 += v5 + w[s[2]]; v13 = Long.rotateRight(v13 ^ v1, 32); v9 += v13; v5 = Long.rotateRight(v5 ^ v9, 24);
                v1 += v5 + w[s[3]]; v13 = Long.rotateRight(v13 ^ v1, 16); v9 += v13; v5 = Long.rotateRight(v5 ^ v9, 63);
                v2 += v6 + w[s[4]]; v14 = Long.rotateRight(v14 ^ v2, 32); v10 += v14; v6 = Long.rotateRight(v6 ^ v10, 24);
                v2 += v6 + w[s[5]]; v14 = Long.rotateRight(v14 ^ v2, 16); v10 += v14; v6 = Long.rotateRight(v6 ^ v10, 63);
                v3 += v7 + w[s[6]]; v15 = Long.rotateRight(v15 ^ v3, 32); v11 += v15; v7 = Long.rotateRight(v7 ^ v11, 24);
                v3 += v7 + w[s[7]]; v15 = Long.rotateRight(v15 ^ v3, 16); v11 += v15; v7 = Long.rotateRight(v7 ^ v11, 63);
                v0 += v5 + w[s[8]]; v15 = Long.rotateRight(v15 ^ v0, 32); v10 += v15; v5 = Long.rotateRight(v5 ^ v10, 24);
                v0 += v5 + w[s[9]]; v15 = Long.rotateRight(v15 ^ v0, 16); v10 += v15; v5 = Long.rotateRight(v5 ^ v10, 63);
                v1 += v6 + w[s[10]]; v12 = Long.rotateRight(v12 ^ v1, 32); v11 += v12; v6 = Long.rotateRight(v6 ^ v11, 24);
                v1 += v6 + w[s[11]]; v12 = Long.rotateRight(v12 ^ v1, 16); v11 += v12; v6 = Long.rotateRight(v6 ^ v11, 63);
                v2 += v7 + w[s[12]]; v13 = Long.rotateRight(v13 ^ v2, 32); v8 += v13; v7 = Long.rotateRight(v7 ^ v8, 24);
                v2 += v7 + w[s[13]]; v13 = Long.rotateRight(v13 ^ v2, 16); v8 += v13; v7 = Long.rotateRight(v7 ^ v8, 63);
                v3 += v4 + w[s[14]]; v14 = Long.rotateRight(v14 ^ v3, 32); v9 += v14; v4 = Long.rotateRight(v4 ^ v9, 24);
                v3 += v4 + w[s[15]]; v14 = Long.rotateRight(v14 ^ v3, 16); v9 += v14; v4 = Long.rotateRight(v4 ^ v9, 63);
            }
            h[0] ^= v0 ^ v8;
            h[1] ^= v1 ^ v9;
            h[2] ^= v2 ^ v10;
            h[3] ^= v3 ^ v11;
            h[4] ^= v4 ^ v12;
            h[5] ^= v5 ^ v13;
            h[6] ^= v6 ^ v14;
            h[7] ^= v7 ^ v15;
        }
    }
}
