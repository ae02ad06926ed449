package dev.weft.registry.etcd;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Gives every etcd call except the watch stream a deadline. jetcd sets none, and without one a call to a member that
 * lost its quorum waits for etcd's own request timeout (seconds) while the registration it serves should already be
 * retrying elsewhere. The watch stream is meant to live for hours; it is the only call left alone.
 */
final class CallDeadlines implements ClientInterceptor {
    private static final String WATCH = "etcdserverpb.Watch/Watch";
    private final long timeoutNanos;

    CallDeadlines(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        if (options.getDeadline() != null || WATCH.equals(method.getFullMethodName())) {
            return next.newCall(method, options);
        }
        return next.newCall(method, options.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS));
    }
}
