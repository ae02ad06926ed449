package dev.weft.dataplane.balancing;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Consistent hashing on a request key (a header named in config): the same key goes to the same endpoint while it
 * lives and has room, so caches behind it stay warm; when endpoints come or go only the keys of their ring segments
 * move. Each endpoint gets points on the ring in proportion to its weight. A full, unreachable or excluded endpoint
 * passes the request to the next point clockwise. Worker-confined: the ring is rebuilt when the endpoint list changes.
 */
final class RingHashBalancer implements Balancer {
    private static final int POINTS_PER_WEIGHT = 64;

    private List<EndpointState> seen;
    private long[] ring = new long[0];
    private EndpointState[] owners = new EndpointState[0];

    @Override
    public EndpointState pick(List<EndpointState> endpoints, long hash, EndpointState exclude) {
        if (endpoints != seen) {
            build(endpoints);
        }
        if (ring.length == 0) {
            return null;
        }
        int i = Arrays.binarySearch(ring, mix(hash));
        if (i < 0) {
            i = -i - 1;
        }
        for (int step = 0; step < ring.length; step++) {
            EndpointState e = owners[(i + step) % ring.length];
            if (e != exclude && e.tryAcquire()) {
                return e;
            }
        }
        return null;
    }

    private void build(List<EndpointState> endpoints) {
        seen = endpoints;
        int total = 0;
        for (EndpointState e : endpoints) {
            total += e.weight() * POINTS_PER_WEIGHT;
        }
        long[] points = new long[total];
        EndpointState[] who = new EndpointState[total];
        int k = 0;
        for (EndpointState e : endpoints) {
            byte[] id = e.endpoint().id().getBytes(StandardCharsets.UTF_8);
            for (int p = 0; p < e.weight() * POINTS_PER_WEIGHT; p++) {
                points[k] = mix(fnv(id) * 31 + p);
                who[k] = e;
                k++;
            }
        }
        Integer[] order = new Integer[total];
        for (int j = 0; j < total; j++) {
            order[j] = j;
        }
        Arrays.sort(order, (x, y) -> Long.compare(points[x], points[y]));
        ring = new long[total];
        owners = new EndpointState[total];
        for (int j = 0; j < total; j++) {
            ring[j] = points[order[j]];
            owners[j] = who[order[j]];
        }
    }

    /** FNV-1a over the bytes of a string: stable across JVMs, unlike String.hashCode's spread. */
    static long fnv(byte[] bytes) {
        long h = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    /** A 64-bit finaliser (SplitMix64) so neighbouring inputs land far apart on the ring. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
