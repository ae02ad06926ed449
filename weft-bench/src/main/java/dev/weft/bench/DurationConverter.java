package dev.weft.bench;

import picocli.CommandLine;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads durations the way wrk users type them: {@code 30s}, {@code 500ms}, {@code 2m}, {@code 1h}; a bare number is seconds. */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?");

    @Override
    public Duration convert(String value) {
        try {
            return parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }

    public static Duration parse(String value) {
        String text = value == null ? "" : value.strip();
        Matcher m = SIMPLE.matcher(text);
        if (m.matches()) {
            double amount = Double.parseDouble(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            double millis = switch (unit) {
                case "ms" -> amount;
                case "s" -> amount * 1_000;
                case "m" -> amount * 60_000;
                default -> amount * 3_600_000;
            };
            return Duration.ofNanos(Math.round(millis * 1_000_000));
        }
        try {
            return Duration.parse(text);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("invalid duration '" + value + "' (expected e.g. 30s, 500ms, 2m or 1h)");
        }
    }

    /** The inverse for messages: {@code 30s}, {@code 1.5s}, {@code 250ms}. */
    public static String format(Duration d) {
        long millis = d.toMillis();
        if (millis < 1_000) {
            return millis + "ms";
        }
        if (millis % 1_000 == 0) {
            return (millis / 1_000) + "s";
        }
        return String.format(java.util.Locale.ROOT, "%.1fs", millis / 1_000.0);
    }
}
