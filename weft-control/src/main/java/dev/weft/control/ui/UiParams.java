package dev.weft.control.ui;

import dev.weft.registry.ServiceNames;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The dashboard API's query parameters, each read through an allow-list: a value that breaks it throws
 * {@link BadRequest}, whose message says what was expected ({@link UiApi} answers it 400 and counts it).
 */
final class UiParams {
    private static final Pattern INSTANCE = Pattern.compile("[A-Za-z0-9\\[][A-Za-z0-9._:@\\[\\]-]{0,252}");
    private static final Pattern FILTER = Pattern.compile("[\\p{Alnum} ._:@/\\[\\]-]{0,100}");

    private UiParams() {}

    /** A parameter that breaks its allow-list: answered 400 with the message. */
    static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message, null, false, false);
        }
    }

    private static String first(Map<String, List<String>> params, String name) {
        List<String> v = params.get(name);
        return v == null || v.isEmpty() ? null : v.getFirst();
    }

    static String text(Map<String, List<String>> params, String name) {
        String v = first(params, name);
        if (v == null) {
            return "";
        }
        if (!FILTER.matcher(v).matches()) {
            throw new BadRequest("invalid " + name + " '" + abbreviate(v) + "' (expected up to 100 letters, digits,"
                    + " spaces and . _ : @ / [ ] -)");
        }
        return v.strip();
    }

    static int limit(Map<String, List<String>> params, String name, int dflt, int max) {
        String v = first(params, name);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 0 && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new BadRequest("invalid " + name + " '" + abbreviate(v) + "' (expected a whole number 0-" + max + ")");
    }

    static String service(Map<String, List<String>> params, String name) {
        String v = first(params, name);
        if (v == null || !ServiceNames.isValid(v)) {
            throw new BadRequest(v == null ? "missing parameter '" + name + "' (a service name)"
                    : "invalid " + name + " '" + abbreviate(v) + "' (expected " + ServiceNames.RULE + ")");
        }
        return v;
    }

    static String instance(Map<String, List<String>> params, String name) {
        String v = first(params, name);
        if (v == null || !INSTANCE.matcher(v).matches()) {
            throw new BadRequest(v == null ? "missing parameter '" + name + "' (an instance id)"
                    : "invalid " + name + " '" + abbreviate(v) + "' (expected letters, digits and . _ - : @ [ ])");
        }
        return v;
    }

    private static String abbreviate(String s) {
        return s.length() <= 60 ? s : s.substring(0, 60) + "...";
    }
}
