package dev.weft.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Bytes carried by the link between the two proxy roles, counted at the socket: the kernel's own per-connection
 * counters ({@code tcp_info}'s {@code bytes_received} and {@code bytes_acked}, as printed by {@code ss -tni}) of the
 * connections accepted by the provider-side proxies' listeners. Payload bytes only: no TCP/IP headers, no
 * retransmissions. Works the same for WMP and HTTP/1.1, and for every proxy, without touching them.
 *
 * <p>A connection that closes inside the measured window takes its counts with it; {@link Delta#closed()} says how
 * many did, so a reader can tell whether the figure is complete (persistent and keep-alive connections rarely close).
 */
final class LinkBytes {
    private static final Pattern ADDRESS_LINE = Pattern.compile("^\\S+\\s+\\S+\\s+(\\S+)\\s+(\\S+)");
    private static final Pattern RECEIVED = Pattern.compile("bytes_received:(\\d+)");
    private static final Pattern ACKED = Pattern.compile("bytes_acked:(\\d+)");

    private LinkBytes() {}

    /** Counters of one connection, seen from the accepting side: received = requests, sent = answers. */
    record Counters(long received, long sent) {}

    /**
     * @param toProviders   bytes the provider-side proxies received (requests and their bodies, plus protocol)
     * @param fromProviders bytes they sent back (answers, plus protocol)
     * @param connections   connections seen at the end of the window
     * @param closed        connections seen at the start that were gone at the end (their bytes are not counted)
     */
    record Delta(long toProviders, long fromProviders, int connections, int closed) {
        static final Delta UNKNOWN = new Delta(-1, -1, 0, 0);

        boolean known() {
            return toProviders >= 0;
        }

        long total() {
            return toProviders + fromProviders;
        }
    }

    /** Every established connection whose local port is one of {@code ports}, keyed by its two addresses. */
    static Map<String, Counters> snapshot(Set<Integer> ports) {
        if (ports.isEmpty()) {
            return Map.of();
        }
        String filter = ports.stream().map(p -> "sport = :" + p).collect(Collectors.joining(" or ", "( ", " )"));
        List<String> command = List.of("ss", "-tniH", "state", "established", filter);
        try {
            Process ss = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!ss.waitFor(10, TimeUnit.SECONDS) || ss.exitValue() != 0) {
                return null;
            }
            return parse(output);
        } catch (IOException e) {
            return null; // no ss (iproute2): the figure is reported as unknown
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Parses {@code ss -tniH} output: an address line per connection, then an indented line of tcp_info. */
    static Map<String, Counters> parse(String output) {
        Map<String, Counters> sockets = new HashMap<>();
        String key = null;
        for (String line : output.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            if (!Character.isWhitespace(line.charAt(0))) {
                Matcher m = ADDRESS_LINE.matcher(line);
                key = m.find() ? m.group(1) + " " + m.group(2) : null;
                continue;
            }
            if (key != null) {
                Matcher received = RECEIVED.matcher(line);
                Matcher acked = ACKED.matcher(line);
                sockets.put(key, new Counters(received.find() ? Long.parseLong(received.group(1)) : 0,
                        acked.find() ? Long.parseLong(acked.group(1)) : 0));
                key = null;
            }
        }
        return sockets;
    }

    static Delta delta(Map<String, Counters> before, Map<String, Counters> after) {
        if (before == null || after == null) {
            return Delta.UNKNOWN;
        }
        long received = 0;
        long sent = 0;
        for (Map.Entry<String, Counters> e : after.entrySet()) {
            Counters b = before.getOrDefault(e.getKey(), new Counters(0, 0));
            received += e.getValue().received() - b.received();
            sent += e.getValue().sent() - b.sent();
        }
        int closed = (int) before.keySet().stream().filter(k -> !after.containsKey(k)).count();
        return new Delta(received, sent, after.size(), closed);
    }
}
