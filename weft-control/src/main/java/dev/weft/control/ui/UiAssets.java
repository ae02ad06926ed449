package dev.weft.control.ui;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The dashboard's files, served from the jar ({@code dev/weft/control/ui/} in the resources): plain HTML, CSS and JS
 * modules, nothing fetched from elsewhere at run time. Only the files listed in {@link #FILES} are served (an
 * allow-list: no path from a request ever reaches the class loader). They are read once, at first use.
 */
final class UiAssets {
    static final List<String> FILES = List.of("index.html", "style.css", "app.js", "api.js", "charts.js", "map.js",
            "detail.js", "traces.js", "lists.js");

    private UiAssets() {}

    private static final class Loaded {
        static final Map<String, byte[]> BYTES = load();

        private static Map<String, byte[]> load() {
            Map<String, byte[]> m = new LinkedHashMap<>();
            for (String f : FILES) {
                try (InputStream in = UiAssets.class.getResourceAsStream(f)) {
                    if (in == null) {
                        throw new IllegalStateException("dashboard file " + f + " missing from the jar");
                    }
                    m.put(f, in.readAllBytes());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            return m;
        }
    }

    /** {@code /ui} redirects to {@code /ui/}; {@code /ui/} is the page; {@code /ui/NAME} one of the files. */
    static UiApi.Answer answer(String path) {
        if (path.equals(UiHttpHandler.PAGE_PREFIX)) {
            return new UiApi.Answer(308, "text/plain; charset=utf-8", "see /ui/\n".getBytes(StandardCharsets.UTF_8),
                    "/ui/");
        }
        String name = path.substring(UiHttpHandler.PAGE_PREFIX.length() + 1);
        if (name.isEmpty()) {
            name = "index.html";
        }
        byte[] body = Loaded.BYTES.get(name);
        if (body == null) {
            return UiApi.Answer.error(404, "not-found", "no dashboard file '" + name + "' (the page is /ui/)");
        }
        return new UiApi.Answer(200, contentType(name), body, null);
    }

    private static String contentType(String name) {
        if (name.endsWith(".html")) {
            return "text/html; charset=utf-8";
        }
        if (name.endsWith(".css")) {
            return "text/css; charset=utf-8";
        }
        return "text/javascript; charset=utf-8";
    }
}
