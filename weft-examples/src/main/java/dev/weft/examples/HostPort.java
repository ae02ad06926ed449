package dev.weft.examples;

import picocli.CommandLine;

import java.net.InetSocketAddress;

/** A {@code HOST:PORT} pair as people type it on a command line; IPv6 hosts go in brackets ({@code [::1]:8080}). */
public record HostPort(String host, int port) {
    public HostPort {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("empty host (expected HOST:PORT, e.g. 127.0.0.1:8080)");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " out of range (expected 0-65535; 0 picks a free port)");
        }
    }

    public static HostPort parse(String text) {
        String s = text == null ? "" : text.strip();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new IllegalArgumentException("invalid address '" + text + "' (expected HOST:PORT, e.g. 127.0.0.1:8080)");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid port in '" + text + "' (expected HOST:PORT, e.g. 127.0.0.1:8080)");
        }
        return new HostPort(host, port);
    }

    public static HostPort of(InetSocketAddress address) {
        return new HostPort(address.getAddress().getHostAddress(), address.getPort());
    }

    public InetSocketAddress toSocketAddress() {
        return new InetSocketAddress(host, port);
    }

    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** Lets picocli turn {@code --listen 127.0.0.1:0} into a HostPort and report a readable error otherwise. */
    public static final class Converter implements CommandLine.ITypeConverter<HostPort> {
        @Override
        public HostPort convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
