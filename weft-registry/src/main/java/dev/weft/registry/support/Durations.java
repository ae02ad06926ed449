package dev.weft.registry.support;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one way Weft reads and writes a duration, for every command's flags and every policy document, so that what one
 * place accepts the others accept too: a number with a unit, {@code 500ms}, {@code 1.5s}, {@code 2m}, {@code 1h}
 * (case-insensitive), or ISO-8601 ({@code PT5S}). A bare number is refused, since nothing says whether it means
 * seconds or milliseconds; so is a negative duration.
 */
public final class Durations {
    /** What an error message shows as the expected form. */
    public static final String EXPECTED = "a duration such as 500ms, 1.5s, 2m or 1h";
    private static final Pattern WITH_UNIT = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)");

    private Durations() {
    }

    /** @throws IllegalArgumentException naming the text and the expected form */
    public static Duration parse(String text) {
        String s = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
        Matcher m = WITH_UNIT.matcher(s);
        if (m.matches()) {
            double amount = Double.parseDouble(m.group(1));
            double nanosPerUnit = switch (m.group(2)) {
                case "ms" -> 1e6;
                case "s" -> 1e9;
                case "m" -> 60e9;
                default -> 3_600e9;
            };
            return Duration.ofNanos(Math.round(amount * nanosPerUnit));
        }
        try {
            Duration d = Duration.parse(s.toUpperCase(Locale.ROOT));
            if (!d.isNegative()) {
                return d;
            }
        } catch (DateTimeParseException notIso) {
            // fall through to the error below, which names the forms we take
        }
        // A bare number is the usual slip: say which reading we would guess, rather than guess it.
        String hint = s.matches("\\d+(\\.\\d+)?") ? "; did you mean " + s + "s or " + s + "ms?" : "";
        throw new IllegalArgumentException("invalid duration '" + text + "' (expected " + EXPECTED + hint + ")");
    }

    /** The inverse, for messages and flag defaults: {@code 250ms}, {@code 30s}, {@code 1.5s}, {@code 15m}, {@code 1h}. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + "ms";
        }
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1_000 == 0) {
            return ms / 1_000 + "s";
        }
        return String.format(Locale.ROOT, "%.1fs", ms / 1_000.0);
    }
}
