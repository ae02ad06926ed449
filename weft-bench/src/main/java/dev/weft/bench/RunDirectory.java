package dev.weft.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** An experiment's run directory: one log per process, tokens and the control plane's data; deleted unless kept. */
final class RunDirectory {
    private RunDirectory() {}

    /** The settings' directory (made if missing), or a fresh temporary one. */
    static Path create(ExperimentSettings settings) throws ExperimentException {
        try {
            if (settings.runDir() != null) {
                return Files.createDirectories(settings.runDir());
            }
            return Files.createTempDirectory("weft-demo-");
        } catch (IOException e) {
            throw new ExperimentException("cannot create the run directory "
                    + (settings.runDir() == null ? "in " + System.getProperty("java.io.tmpdir") : settings.runDir())
                    + ": " + e.getMessage(), e);
        }
    }

    static void delete(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the run directory " + dir, e);
        }
    }
}
