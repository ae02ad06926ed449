package dev.weft.dataplane.observe;

/**
 * Appends JSON to a StringBuilder: just what span batches and access log lines need, with correct string escaping.
 * Used on the exporter and access log threads, never on an event loop.
 */
final class JsonText {
    private final StringBuilder sb;
    /** Whether the next value in the current object or array needs a comma before it. */
    private boolean comma;

    JsonText(StringBuilder sb) {
        this.sb = sb;
    }

    JsonText beginObject() {
        separate();
        sb.append('{');
        comma = false;
        return this;
    }

    JsonText endObject() {
        sb.append('}');
        comma = true;
        return this;
    }

    JsonText beginArray() {
        separate();
        sb.append('[');
        comma = false;
        return this;
    }

    JsonText endArray() {
        sb.append(']');
        comma = true;
        return this;
    }

    JsonText name(String name) {
        separate();
        quote(name);
        sb.append(':');
        comma = false;
        return this;
    }

    JsonText value(String v) {
        separate();
        if (v == null) {
            sb.append("null");
        } else {
            quote(v);
        }
        comma = true;
        return this;
    }

    JsonText value(long v) {
        separate();
        sb.append(v);
        comma = true;
        return this;
    }

    /** Milliseconds with microsecond precision, e.g. 12.345: readable in logs without a float formatter. */
    JsonText millis(long micros) {
        separate();
        if (micros < 0) {
            sb.append('-');
            micros = -micros;
        }
        sb.append(micros / 1000).append('.');
        long frac = micros % 1000;
        if (frac < 100) {
            sb.append('0');
        }
        if (frac < 10) {
            sb.append('0');
        }
        sb.append(frac);
        comma = true;
        return this;
    }

    JsonText field(String name, String v) {
        return name(name).value(v);
    }

    JsonText field(String name, long v) {
        return name(name).value(v);
    }

    private void separate() {
        if (comma) {
            sb.append(',');
            comma = false;
        }
    }

    private void quote(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append("\\u00");
                        sb.append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 0xf, 16));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
