package dev.weft.examples;

/**
 * What a provider has done so far, as {@code GET /stats} reports it. {@code served} counts answers sent after the
 * delay; {@code rejected} counts requests refused with 503 because {@code inFlight} was already at the limit.
 */
public record ProviderStats(String name, long served, long rejected, int inFlight, int maxInFlight) {
    public String toJson() {
        return "{\"name\":\"" + escape(name) + "\",\"served\":" + served + ",\"rejected\":" + rejected
                + ",\"inFlight\":" + inFlight + ",\"maxInFlight\":" + maxInFlight + "}";
    }

    private static String escape(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }
}
