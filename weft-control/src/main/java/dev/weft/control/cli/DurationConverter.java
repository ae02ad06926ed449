package dev.weft.control.cli;

import dev.weft.registry.support.Durations;
import picocli.CommandLine;

import java.time.Duration;

/** picocli's side of {@link Durations}: every Weft command's duration flags read the same forms (500ms, 1.5s, 2m, 1h). */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }
}
