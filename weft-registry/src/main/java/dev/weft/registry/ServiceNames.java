package dev.weft.registry;

/**
 * What a service name may be, for everything that names one: the control plane's API (a registration, a watch),
 * and a sidecar routing by Host. One rule, so that a name a sidecar accepts is one the registry can hold: a letter
 * or digit, then up to 252 letters, digits, '.', '_' or '-' (a DNS name's characters, plus '_').
 *
 * <p>An allow-list: anything else ('/', '%', spaces, an IPv6 literal...) is not a service, and a caller that names
 * one gets a 400 at once instead of a registry watch that can never be satisfied.
 */
public final class ServiceNames {
    public static final int MAX_LENGTH = 253;
    /** What {@link #isValid} allows, for error messages. */
    public static final String RULE = "letters, digits, '.', '_' or '-', starting with a letter or digit, at most "
            + MAX_LENGTH + " characters";

    private ServiceNames() {
    }

    public static boolean isValid(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_LENGTH || !letterOrDigit(name.charAt(0))) {
            return false;
        }
        for (int i = 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!letterOrDigit(c) && c != '.' && c != '_' && c != '-') {
                return false;
            }
        }
        return true;
    }

    private static boolean letterOrDigit(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }
}
