package dev.weft.control.cli;

import picocli.CommandLine;

import java.time.Duration;
import java.util.Locale;

/** Parses 500ms, 5s, 2m, 1h or ISO-8601 (PT5S), as every Weft flag does. */
public final class Durations implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        try {
            if (s.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
            }
            if (s.endsWith("s")) {
                return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1)));
            }
            if (s.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(s.substring(0, s.length() - 1)));
            }
            if (s.endsWith("h")) {
                return Duration.ofHours(Long.parseLong(s.substring(0, s.length() - 1)));
            }
            return Duration.parse(v);
        } catch (RuntimeException e) {
            throw new CommandLine.TypeConversionException("invalid duration '" + v + "' (expected e.g. 500ms, 5s, 2m, 1h)");
        }
    }

    static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
