package dev.weft.dataplane.inbound;

import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.transport.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Keep-alive HTTP/1.1 connections from the sidecar to its local application, one idle stack per Worker loop (the
 * connections are registered on that loop, so a request to the app never leaves the thread its mesh stream is on).
 * Capacity is not enforced here but by the app's one-endpoint cluster before a connection is asked for, so the
 * number of connections in use never exceeds {@code --capacity}.
 *
 * <p>Threads: {@link #acquire} and {@link #release} run on the loop they are given; each loop's stack is confined to
 * it. Buffers: none held here.
 */
public final class AppPool {
    private final Transport transport;
    private final InetSocketAddress app;
    private final SidecarMetrics metrics;
    private final Map<EventLoop, ArrayDeque<AppConnection>> idle = new ConcurrentHashMap<>();

    public AppPool(Transport transport, InetSocketAddress app, SidecarMetrics metrics) {
        this.transport = transport;
        this.app = app;
        this.metrics = metrics;
    }

    public InetSocketAddress address() {
        return app;
    }

    /** An idle connection on this loop, or a new one. Call on {@code loop}. */
    public Future<AppConnection> acquire(EventLoop loop) {
        ArrayDeque<AppConnection> stack = idle.computeIfAbsent(loop, l -> new ArrayDeque<>());
        AppConnection c;
        while ((c = stack.pollLast()) != null) {
            if (c.channel().isActive()) {
                return loop.newSucceededFuture(c);
            }
        }
        Promise<AppConnection> promise = loop.newPromise();
        AppConnection conn = new AppConnection(this);
        ChannelFuture cf = new Bootstrap()
                .group(loop)
                .channel(transport.channelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 2000)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast("http", new HttpClientCodec());
                        // Idle keep-alive connections are closed after a minute so a quiet sidecar holds few sockets.
                        ch.pipeline().addLast("idle", new IdleStateHandler(0, 0, 60, TimeUnit.SECONDS));
                        ch.pipeline().addLast("app", conn);
                    }
                })
                .connect(app);
        cf.addListener(f -> {
            if (f.isSuccess()) {
                metrics.appConnectionsOpened.increment();
                promise.setSuccess(conn);
            } else {
                metrics.appConnectFailures.increment();
                promise.setFailure(new AppUnavailableException("app at " + app.getHostString() + ":" + app.getPort()
                        + " is not accepting connections (" + f.cause().getMessage() + ")"));
            }
        });
        return promise;
    }

    /** Returns a connection whose exchange finished cleanly; anything else is closed instead. Call on its loop. */
    void release(AppConnection c, boolean reusable) {
        if (reusable && c.channel().isActive()) {
            idle.computeIfAbsent(c.channel().eventLoop(), l -> new ArrayDeque<>()).addLast(c);
        } else {
            c.channel().close();
        }
    }

    /** The local application refused or dropped the connection. Answered with 502. */
    public static final class AppUnavailableException extends Exception {
        public AppUnavailableException(String message) {
            super(message, null, false, false);
        }
    }
}
