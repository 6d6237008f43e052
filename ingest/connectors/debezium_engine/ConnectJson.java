package lakecdc;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.storage.Converter;

/**
 * Kafka Connect's JsonConverter without schemas, writing the same bytes straight from the record's values instead
 * of building a Jackson tree first (that tree cost about a third of the engine's CPU in a snapshot). EventColumns
 * writes each record's key and value with it, in the hand-over (decoding.py). Anything it is not sure to write
 * as JsonConverter does (schemas in the messages, decimals written as numbers, a value without a schema, a
 * surrogate in a text, a value of an unexpected class) is converted by a JsonConverter with the same settings.
 * With LAKECDC_VERIFY_CONNECT_JSON=1 in the environment (the tests set it) every value is converted both ways
 * and a difference stops the engine (the hand-over raises).
 */
public final class ConnectJson implements Converter {
    private static final class Unsure extends RuntimeException {
        Unsure() {
            super(null, null, false, false);
        }
    }

    private static final Unsure UNSURE = new Unsure();
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};

    private final JsonConverter delegate = new JsonConverter();
    private final Map fieldNames = Collections.synchronizedMap(new IdentityHashMap());   // Schema -> byte[][]
    private final ThreadLocal buffers = new ThreadLocal();   // each converting thread's Out, reused
    private boolean schemasEnabled = true;          // JsonConverter's defaults
    private boolean decimalsAsBase64 = true;
    private boolean replaceNullWithDefault = true;
    private final boolean verify = "1".equals(System.getenv("LAKECDC_VERIFY_CONNECT_JSON"));

    @Override
    public void configure(Map configs, boolean isKey) {
        delegate.configure(configs, isKey);
        schemasEnabled = flag(configs.get("schemas.enable"), true);
        replaceNullWithDefault = flag(configs.get("replace.null.with.default"), true);
        Object format = configs.get("decimal.format");
        decimalsAsBase64 = format == null || "BASE64".equalsIgnoreCase(String.valueOf(format).trim());
    }

    private static boolean flag(Object value, boolean otherwise) {
        return value == null ? otherwise : Boolean.parseBoolean(String.valueOf(value).trim());
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        if (schemasEnabled || schema == null) {
            return delegate.fromConnectData(topic, schema, value);
        }
        byte[] written;
        try {
            Out out = (Out) buffers.get();
            if (out == null) {
                out = new Out();
                buffers.set(out);
            }
            out.size = 0;
            write(out, schema, value);
            written = out.bytes();
        } catch (Unsure unsure) {
            return delegate.fromConnectData(topic, schema, value);
        }
        if (verify) {
            byte[] expected = delegate.fromConnectData(topic, schema, value);
            if (!Arrays.equals(expected, written)) {
                throw new IllegalStateException("lakecdc.ConnectJson wrote " + new String(written, StandardCharsets.UTF_8)
                    + " where JsonConverter writes " + new String(expected, StandardCharsets.UTF_8) + " (topic " + topic
                    + ", schema " + schema.name() + ")");
            }
        }
        return written;
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        return delegate.toConnectData(topic, value);
    }

    // -- values, as JsonConverter.convertToJson and Jackson's writer have them --------------------------------------
    private void write(Out out, Schema schema, Object value) {
        if (value == null) {
            if (schema.defaultValue() != null && replaceNullWithDefault) {
                write(out, schema, schema.defaultValue());
            } else if (schema.isOptional()) {
                out.add(NULL);
            } else {
                throw UNSURE;   // JsonConverter raises its own error
            }
            return;
        }
        String logical = schema.name();
        if (logical != null) {
            if (Decimal.LOGICAL_NAME.equals(logical)) {
                if (!decimalsAsBase64 || !(value instanceof BigDecimal)) {
                    throw UNSURE;
                }
                base64(out, Decimal.fromLogical(schema, (BigDecimal) value));
                return;
            }
            if (Date.LOGICAL_NAME.equals(logical) || Time.LOGICAL_NAME.equals(logical)) {
                if (!(value instanceof java.util.Date)) {
                    throw UNSURE;
                }
                out.ascii(Integer.toString(Date.LOGICAL_NAME.equals(logical)
                    ? Date.fromLogical(schema, (java.util.Date) value) : Time.fromLogical(schema, (java.util.Date) value)));
                return;
            }
            if (Timestamp.LOGICAL_NAME.equals(logical)) {
                if (!(value instanceof java.util.Date)) {
                    throw UNSURE;
                }
                out.ascii(Long.toString(Timestamp.fromLogical(schema, (java.util.Date) value)));
                return;
            }
        }
        switch (schema.type()) {
            case INT8:
            case INT16:
            case INT32:
            case INT64:
                if (!expected(schema, value)) {
                    throw UNSURE;
                }
                out.ascii(Long.toString(((Number) value).longValue()));
                return;
            case FLOAT32:
                if (!(value instanceof Float)) {
                    throw UNSURE;
                }
                floating(out, value.toString(), Float.isFinite(((Float) value).floatValue()));
                return;
            case FLOAT64:
                if (!(value instanceof Double)) {
                    throw UNSURE;
                }
                floating(out, value.toString(), Double.isFinite(((Double) value).doubleValue()));
                return;
            case BOOLEAN:
                if (!(value instanceof Boolean)) {
                    throw UNSURE;
                }
                out.add(((Boolean) value).booleanValue() ? TRUE : FALSE);
                return;
            case STRING:
                if (!(value instanceof CharSequence)) {
                    throw UNSURE;
                }
                text(out, value.toString());
                return;
            case BYTES:
                if (value instanceof byte[]) {
                    base64(out, (byte[]) value);
                } else if (value instanceof ByteBuffer && ((ByteBuffer) value).hasArray()) {
                    base64(out, ((ByteBuffer) value).array());   // the whole backing array, as JsonConverter takes it
                } else {
                    throw UNSURE;
                }
                return;
            case ARRAY:
                if (!(value instanceof Collection)) {
                    throw UNSURE;
                }
                out.add((byte) '[');
                boolean first = true;
                for (Iterator items = ((Collection) value).iterator(); items.hasNext(); ) {
                    if (!first) {
                        out.add((byte) ',');
                    }
                    first = false;
                    write(out, schema.valueSchema(), items.next());
                }
                out.add((byte) ']');
                return;
            case MAP:
                map(out, schema, value);
                return;
            case STRUCT:
                struct(out, schema, value);
                return;
            default:
                throw UNSURE;
        }
    }

    /** Float.toString's or Double.toString's text; NaN and the infinities quoted, as Jackson writes them. */
    private static void floating(Out out, String text, boolean finite) {
        if (finite) {
            out.ascii(text);
        } else {
            out.add((byte) '"').ascii(text).add((byte) '"');
        }
    }

    /** The class JsonConverter casts the value to for the schema's integer type. */
    private static boolean expected(Schema schema, Object value) {
        switch (schema.type()) {
            case INT8: return value instanceof Byte;
            case INT16: return value instanceof Short;
            case INT32: return value instanceof Integer;
            default: return value instanceof Long;
        }
    }

    private void map(Out out, Schema schema, Object value) {
        if (!(value instanceof Map)) {
            throw UNSURE;
        }
        boolean objectMode = schema.keySchema().type() == Schema.Type.STRING;
        out.add(objectMode ? (byte) '{' : (byte) '[');
        boolean first = true;
        for (Iterator entries = ((Map) value).entrySet().iterator(); entries.hasNext(); ) {
            Map.Entry entry = (Map.Entry) entries.next();
            if (!first) {
                out.add((byte) ',');
            }
            first = false;
            if (objectMode) {
                if (!(entry.getKey() instanceof String)) {
                    throw UNSURE;
                }
                text(out, (String) entry.getKey());
                out.add((byte) ':');
                write(out, schema.valueSchema(), entry.getValue());
            } else {
                out.add((byte) '[');
                write(out, schema.keySchema(), entry.getKey());
                out.add((byte) ',');
                write(out, schema.valueSchema(), entry.getValue());
                out.add((byte) ']');
            }
        }
        out.add(objectMode ? (byte) '}' : (byte) ']');
    }

    private void struct(Out out, Schema schema, Object value) {
        if (!(value instanceof Struct)) {
            throw UNSURE;
        }
        Struct struct = (Struct) value;
        if (struct.schema() != schema && !struct.schema().equals(schema)) {
            throw UNSURE;   // JsonConverter refuses it
        }
        out.add((byte) '{');
        List fields = schema.fields();
        byte[][] names = names(schema, fields);
        for (int i = 0; i < fields.size(); i++) {
            Field field = (Field) fields.get(i);
            out.add(names[i]);
            Object fieldValue = struct.get(field);   // the default when the value is null and a default exists
            if (fieldValue != null && !replaceNullWithDefault && field.schema().defaultValue() != null) {
                fieldValue = struct.getWithoutDefault(field.name());
            }
            write(out, field.schema(), fieldValue);
        }
        out.add((byte) '}');
    }

    /** The struct schema's field names as written before their values (`"name":`, `,"name":` after the first),
     * made once per schema object (the engine's converter threads share them). */
    private byte[][] names(Schema schema, List fields) {
        byte[][] names = (byte[][]) fieldNames.get(schema);
        if (names == null) {
            names = new byte[fields.size()][];
            for (int i = 0; i < names.length; i++) {
                Out out = new Out();
                if (i > 0) {
                    out.add((byte) ',');
                }
                text(out, ((Field) fields.get(i)).name());
                names[i] = out.add((byte) ':').bytes();
            }
            fieldNames.put(schema, names);
        }
        return names;
    }

    /** A JSON string as Jackson writes it: quote, backslash and control characters escaped, the rest UTF-8. */
    private static void text(Out out, String text) {
        int length = text.length();
        out.room(6 * length + 2);   // 6: the longest a character takes (an escape: backslash, u, four digits)
        byte[] buffer = out.buffer;
        buffer[out.size++] = '"';
        for (int i = 0; i < length; i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                if (c >= 0x20 && c != '"' && c != '\\') {
                    buffer[out.size++] = (byte) c;
                } else {
                    escape(out, c);
                }
            } else if (c < 0x800) {
                buffer[out.size++] = (byte) (0xc0 | (c >> 6));
                buffer[out.size++] = (byte) (0x80 | (c & 0x3f));
            } else if (Character.isSurrogate(c)) {
                throw UNSURE;   // Jackson writes surrogates in ways of its own
            } else {
                buffer[out.size++] = (byte) (0xe0 | (c >> 12));
                buffer[out.size++] = (byte) (0x80 | ((c >> 6) & 0x3f));
                buffer[out.size++] = (byte) (0x80 | (c & 0x3f));
            }
        }
        out.add((byte) '"');
    }

    private static void escape(Out out, char c) {
        out.add((byte) '\\');
        switch (c) {
            case '"': out.add((byte) '"'); return;
            case '\\': out.add((byte) '\\'); return;
            case '\b': out.add((byte) 'b'); return;
            case '\t': out.add((byte) 't'); return;
            case '\n': out.add((byte) 'n'); return;
            case '\f': out.add((byte) 'f'); return;
            case '\r': out.add((byte) 'r'); return;
            default:
                out.add((byte) 'u').add((byte) '0').add((byte) '0').add(HEX[c >> 4]).add(HEX[c & 0xf]);
        }
    }

    private static void base64(Out out, byte[] bytes) {
        out.add((byte) '"');
        out.add(Base64.getEncoder().encode(bytes));
        out.add((byte) '"');
    }

    /** A growing byte buffer. */
    private static final class Out {
        byte[] buffer = new byte[256];
        int size;

        void room(int more) {
            if (size + more > buffer.length) {
                buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, size + more));
            }
        }

        Out add(byte one) {
            room(1);
            buffer[size++] = one;
            return this;
        }

        Out add(byte[] many) {
            room(many.length);
            System.arraycopy(many, 0, buffer, size, many.length);
            size += many.length;
            return this;
        }

        Out ascii(String text) {
            int length = text.length();
            room(length);
            for (int i = 0; i < length; i++) {
                buffer[size++] = (byte) text.charAt(i);
            }
            return this;
        }

        byte[] bytes() {
            return Arrays.copyOf(buffer, size);
        }
    }
}
