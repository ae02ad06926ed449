package dev.weft.examples;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;

/**
 * Keep-alive connections from the consumer to the provider, one pool per event loop.
 *
 * <p>Thread: a pool and all its connections live on one event loop, the same one as the inbound connections that
 * use it, so a call never hops threads and nothing here is locked. It reuses the most recently idle connection
 * (warm in caches), opens a new one when none is idle, and queues calls once {@code maxConnections} are open.
 * Buffers: the pool holds none; queued exchanges own their bodies until sent or failed.
 */
final class ProviderPool {
    private final EventLoop loop;
    private final ProviderTarget target;
    private final InetSocketAddress address;
    private final int maxConnections;
    private final Duration timeout;
    private final Bootstrap bootstrap;
    private final ArrayDeque<ProviderConnection> idle = new ArrayDeque<>();
    private final ArrayDeque<ProviderExchange> waiting = new ArrayDeque<>();
    private int open;

    ProviderPool(EventLoop loop, ProviderTarget target, int maxConnections, Duration timeout) {
        this.loop = loop;
        this.target = target;
        this.address = target.resolved();
        this.maxConnections = maxConnections;
        this.timeout = timeout;
        this.bootstrap = new Bootstrap()
                .group(loop)
                .channel(NettyTransport.channelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5_000)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast("http", new HttpClientCodec())
                                .addLast("aggregator", new HttpObjectAggregator(ProviderServer.MAX_BODY_BYTES))
                                .addLast("provider", new ProviderConnection(ProviderPool.this));
                    }
                });
    }

    void send(ProviderExchange exchange) {
        assert loop.inEventLoop();
        ProviderConnection connection;
        while ((connection = idle.pollLast()) != null) {
            if (connection.isActive()) {
                connection.send(exchange);
                return;
            }
        }
        if (open < maxConnections) {
            connect(exchange);
        } else {
            waiting.addLast(exchange);
        }
    }

    private void connect(ProviderExchange first) {
        open++;
        ChannelFuture future = bootstrap.connect(address);
        future.addListener(f -> {
            if (f.isSuccess()) {
                future.channel().pipeline().get(ProviderConnection.class).send(first);
            } else {
                // A failed connect never became active, so closed() will not run for it.
                open--;
                first.fail(HttpResponseStatus.BAD_GATEWAY, "cannot connect to provider " + target.url() + ": "
                        + describe(f.cause()));
                connectForWaiting();
            }
        });
    }

    /** A connection finished its call and may carry another. */
    void release(ProviderConnection connection) {
        ProviderExchange next = waiting.pollFirst();
        if (next != null) {
            connection.send(next);
        } else {
            idle.addLast(connection);
        }
    }

    /** A connection closed (by either side); its slot may serve a queued call. */
    void closed(ProviderConnection connection) {
        open--;
        idle.remove(connection);
        connectForWaiting();
    }

    private void connectForWaiting() {
        if (!waiting.isEmpty() && open < maxConnections) {
            connect(waiting.pollFirst());
        }
    }

    ProviderTarget target() {
        return target;
    }

    Duration timeout() {
        return timeout;
    }

    static String describe(Throwable cause) {
        if (cause == null) {
            return "unknown error";
        }
        String message = cause.getMessage();
        return message == null || message.isBlank() ? cause.getClass().getSimpleName() : message;
    }
}
