package dev.weft.dataplane.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The sidecar's version, from the POM (resource filtering of {@code build.properties}), never written by hand. A
 * sidecar registers it as endpoint metadata {@code version} and shows it in /config, so the operator's dashboard can
 * tell which sidecars run which build.
 */
public final class BuildInfo {
    private static final String VERSION = load();

    private BuildInfo() {}

    /** The build's version, or "unknown" for classes compiled without Maven's filtering (an IDE build). */
    public static String version() {
        return VERSION;
    }

    private static String load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("/dev/weft/dataplane/build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String v = p.getProperty("version", "unknown");
        return v.startsWith("${") ? "unknown" : v;
    }
}
