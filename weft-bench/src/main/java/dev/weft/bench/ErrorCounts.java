package dev.weft.bench;

import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Failed requests of a measured run, by kind.
 *
 * @param byStatus   answers whose status was not 200, by status code (503 is the providers' back-pressure)
 * @param wrongBody  200 answers whose body was not {@code String.valueOf(data.hashCode())}
 * @param connection connections that failed to open, or closed with a request outstanding
 * @param timeout    requests with no answer within the generator's timeout
 */
public record ErrorCounts(SortedMap<Integer, Long> byStatus, long wrongBody, long connection, long timeout) {
    public ErrorCounts {
        byStatus = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(byStatus));
    }

    public static ErrorCounts none() {
        return new ErrorCounts(new TreeMap<>(), 0, 0, 0);
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
        return statuses + ", wrong body: " + wrongBody + ", connection: " + connection + ", timeout: " + timeout;
    }
}
