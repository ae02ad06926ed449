package dev.weft.dataplane.observe;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A lock-free queue with a capacity: many producers (Worker loops) offer without ever waiting, and an offer beyond the
 * capacity fails at once so the caller can drop and count. One consumer thread polls.
 */
final class BoundedQueue<T> {
    private final ConcurrentLinkedQueue<T> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger size = new AtomicInteger();
    private final int capacity;

    BoundedQueue(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("queue capacity must be >= 1, got " + capacity);
        }
        this.capacity = capacity;
    }

    /** @return false when full (the item was not queued) */
    boolean offer(T item) {
        if (size.incrementAndGet() > capacity) {
            size.decrementAndGet();
            return false;
        }
        queue.offer(item);
        return true;
    }

    T poll() {
        T item = queue.poll();
        if (item != null) {
            size.decrementAndGet();
        }
        return item;
    }

    int size() {
        return size.get();
    }

    int capacity() {
        return capacity;
    }
}
