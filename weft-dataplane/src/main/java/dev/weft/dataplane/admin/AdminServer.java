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
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The sidecar's admin listener (loopback by default). Each route is a function producing status, content type and
 * text; routes only read counters, so they never block.
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
    private Channel channel;

    public AdminServer(Transport transport, Map<String, Supplier<Reply>> routes) {
        this.transport = transport;
        this.routes = Map.copyOf(routes);
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
            String path = new QueryStringDecoder(req.uri()).path();
            Supplier<Reply> route = routes.get(path);
            Reply reply;
            if (route == null) {
                reply = Reply.text(404, "unknown admin path '" + path + "' (known: " + String.join(", ",
                        new java.util.TreeSet<>(routes.keySet())) + ")\n");
            } else {
                try {
                    reply = route.get();
                } catch (RuntimeException e) {
                    reply = Reply.text(500, "admin route " + path + " failed: " + e + "\n");
                }
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

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
