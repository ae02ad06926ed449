package dev.weft.dataplane.admin;

import dev.weft.dataplane.transport.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The sidecar's admin listener (loopback by default). Each route is a function producing status, content type and
 * text; routes only read counters, so they never block. Actions ({@code POST}) change the sidecar's state (an
 * operator pausing observability, say): they answer only callers on loopback (403 to any other, whatever the listen
 * address), because the admin address is registered and the control plane scrapes it, so it may be reachable from
 * the network when an operator binds it so. A route asked with the other method gets 405 and names the one it takes.
 *
 * <p>The admin connections live on the Manager's loop, not on a Worker: a route does not block, but rendering
 * {@code /metrics} (every route's counters and latency histograms, merged from the Workers' cells) takes a while, and
 * the control plane scrapes it every few seconds ({@code HistoryScraper}). On a Worker that time would be a pause for
 * every request of that Worker's connections; the Manager only accepts connections, which a sidecar's persistent mesh
 * and app connections rarely ask of it.
 *
 * <p>Thread: {@link #bind} and {@link #close} run on the caller's thread; each admin connection and its routes run on
 * the Manager's loop. Buffers: request messages are released by SimpleChannelInboundHandler; responses are released
 * by the encoder.
 */
public final class AdminServer implements AutoCloseable {

    /** What a route answers. */
    public record Reply(int status, String contentType, String body) {
        public static Reply text(int status, String body) {
            return new Reply(status, "text/plain; charset=utf-8", body);
        }
    }

    private final Transport transport;
    private final Map<String, Supplier<Reply>> routes;
    private final Map<String, Function<QueryStringDecoder, Reply>> actions;
    private Channel channel;

    public AdminServer(Transport transport, Map<String, Supplier<Reply>> routes) {
        this(transport, routes, Map.of());
    }

    /**
     * @param routes  read-only pages, answered to GET (and HEAD)
     * @param actions state changes, answered to POST from loopback; each gets the request's query
     */
    public AdminServer(Transport transport, Map<String, Supplier<Reply>> routes,
                       Map<String, Function<QueryStringDecoder, Reply>> actions) {
        this.transport = transport;
        this.routes = Map.copyOf(routes);
        this.actions = Map.copyOf(actions);
    }

    public InetSocketAddress bind(InetSocketAddress address) throws InterruptedException {
        channel = new ServerBootstrap()
                .group(transport.manager(), transport.manager()) // see the class comment: no Worker renders a page
                .channel(transport.serverChannelClass())
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(64 * 1024), new Handler());
                    }
                })
                .bind(address).sync().channel();
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void close() {
        if (channel != null) {
            channel.close().syncUninterruptibly();
        }
    }

    private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            QueryStringDecoder uri = new QueryStringDecoder(req.uri());
            Reply reply;
            try {
                reply = answer(ctx, req.method(), uri);
            } catch (RuntimeException e) {
                reply = Reply.text(500, "admin route " + uri.path() + " failed: " + e + "\n");
            }
            ByteBuf body = ctx.alloc().buffer();
            body.writeCharSequence(reply.body(), StandardCharsets.UTF_8);
            FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.valueOf(reply.status()), body);
            resp.headers().set(HttpHeaderNames.CONTENT_TYPE, reply.contentType())
                    .set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            HttpUtil.setKeepAlive(resp, keepAlive);
            var f = ctx.writeAndFlush(resp);
            if (!keepAlive) {
                f.addListener(ChannelFutureListener.CLOSE);
            }
        }

        private Reply answer(ChannelHandlerContext ctx, HttpMethod method, QueryStringDecoder uri) {
            String path = uri.path();
            boolean read = method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD);
            if (read && routes.containsKey(path)) {
                return routes.get(path).get();
            }
            if (method.equals(HttpMethod.POST) && actions.containsKey(path)) {
                if (!(ctx.channel().remoteAddress() instanceof InetSocketAddress peer)
                        || peer.getAddress() == null || !peer.getAddress().isLoopbackAddress()) {
                    return Reply.text(403, "POST " + path + " is answered only to callers on loopback\n");
                }
                return actions.get(path).apply(uri);
            }
            if (routes.containsKey(path) || actions.containsKey(path)) {
                return Reply.text(405, method + " " + path + ": expected " + (routes.containsKey(path) ? "GET" : "POST")
                        + "\n");
            }
            java.util.TreeSet<String> known = new java.util.TreeSet<>(routes.keySet());
            actions.keySet().forEach(a -> known.add("POST " + a));
            return Reply.text(404, "unknown admin path '" + path + "' (known: " + String.join(", ", known) + ")\n");
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
