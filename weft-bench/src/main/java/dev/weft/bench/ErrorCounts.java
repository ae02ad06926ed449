package dev.weft.bench;

import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Failed requests of a measured run, by kind.
 *
 * @param byStatus   answers whose status was not 200, by status code (503 is the providers' back-pressure)
 * @param byOrigin   the same answers by status and who produced them: {@code "503 provider small"} (the provider's
 *                   own limit), {@code "503 mesh no-capacity"} (a sidecar, with the kind it named in
 *                   {@code x-weft-error}), {@code "502 front"} (the process the generator talks to)
 * @param wrongBody  200 answers whose body was not {@code String.valueOf(data.hashCode())}
 * @param connection connections that failed to open, or closed with a request outstanding
 * @param timeout    requests with no answer within the generator's timeout
 */
public record ErrorCounts(SortedMap<Integer, Long> byStatus, SortedMap<String, Long> byOrigin, long wrongBody,
                          long connection, long timeout) {
    public ErrorCounts {
        byStatus = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(byStatus));
        byOrigin = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(byOrigin));
    }

    public static ErrorCounts none() {
        return new ErrorCounts(new TreeMap<>(), new TreeMap<>(), 0, 0, 0);
    }

    public long byStatusTotal() {
        return byStatus.values().stream().mapToLong(Long::longValue).sum();
    }

    public long total() {
        return byStatusTotal() + wrongBody + connection + timeout;
    }

    /** {@code none}, or e.g. {@code status 503: 12, wrong body: 1, connection: 0, timeout: 0}. */
    public String describe() {
        if (total() == 0) {
            return "none";
        }
        String statuses = byStatus.isEmpty() ? "status: 0" : byStatus.entrySet().stream()
                .map((Map.Entry<Integer, Long> e) -> "status " + e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining(", "));
        String origins = byOrigin.isEmpty() ? "" : " (by origin: " + byOrigin.entrySet().stream()
                .map((Map.Entry<String, Long> e) -> e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining(", ")) + ")";
        return statuses + ", wrong body: " + wrongBody + ", connection: " + connection + ", timeout: " + timeout
                + origins;
    }
}
