package dev.weft.registry.http;

import dev.weft.registry.support.StartupTrace;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.ReferenceCountUtil;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * A small HTTP/1.1 client on Netty, for the sidecar's calls to its control plane and span collector. The sidecar
 * already runs on Netty, so this costs it a few dozen classes where the JDK's {@code java.net.http.HttpClient}
 * (with its TLS stack, loaded even for plain HTTP) cost about 600, and their metadata stays resident
 * (docs/benchmarks.md, start-up and memory).
 *
 * <p>What it does: request/response calls with a whole body ({@link #send}), and a long-lived response read line by
 * line ({@link #stream}, for the registry's watch streams). Keep-alive connections are pooled per host and port;
 * a call that fails on a pooled connection before any answer (the server closed it while idle) is retried once on a
 * new one, as the JDK's client does. {@code https} works (the JDK's TLS provider; the trust given, or the default
 * trust set up when first used), never falling back to plain HTTP; a failed handshake fails the call with its
 * {@link SSLException}, whose message says why. No redirects, no HTTP/2, no proxy.
 *
 * <p>Errors keep the JDK client's types, so callers' messages do not change: a refused connection is a
 * {@link java.net.ConnectException}, a connect timeout an {@link HttpConnectTimeoutException}, a call that outlives
 * its timeout an {@link HttpTimeoutException}.
 *
 * <p>Threading: one event loop thread per client ("weft-http-NAME", daemon) owns every channel, the idle pool and
 * the timers; futures complete and stream listeners are called on it, so they must hand off anything slow.
 * Buffers: a request's body is copied into a pooled direct buffer (the channel's allocator) when it is written;
 * Netty releases it once written or failed. Each response
 * {@link HttpContent} is copied out (into a byte array or a line) and released by {@link Exchange#channelRead}.
 */
public final class SmallHttpClient implements AutoCloseable {
    /**
     * The request target this client sends for {@code uri} (path and query, "/" for none): what a signature over a
     * request must cover to match what the server reads.
     */
    public static String requestTarget(URI uri) {
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        return uri.getRawQuery() == null ? path : path + "?" + uri.getRawQuery();
    }

    /** Bodies of whole answers above this fail the call rather than grow without bound. */
    static final int MAX_BODY = 16 * 1024 * 1024;

    /** A whole answer. */
    public record Response(int status, byte[] body) {
        public String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** Ends a stream: closes its connection; no listener call follows. */
    public interface Cancellable {
        void cancel();
    }

    private final EventLoopGroup loop;
    private final Bootstrap bootstrap;
    private final Duration connectTimeout;
    // Event loop only.
    private final Map<String, ArrayDeque<Channel>> idle = new HashMap<>();
    private SslContext tls;
    private volatile boolean closed;

    /** @param name thread name suffix ("registry"); @param tls for https (pinned trust), null: the JDK's default */
    public SmallHttpClient(String name, Duration connectTimeout, SslContext tls) {
        this.tls = tls;
        this.connectTimeout = connectTimeout;
        this.loop = new MultiThreadIoEventLoopGroup(1, r -> {
            Thread t = new Thread(r, "weft-http-" + name);
            t.setDaemon(true);
            return t;
        }, NioIoHandler.newFactory());
        this.bootstrap = new Bootstrap().group(loop).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                .option(ChannelOption.TCP_NODELAY, true);
    }

    /**
     * One call. {@code body} may be null (no body). {@code timeout} bounds the whole call (null: none).
     * The future completes on the client's event loop.
     */
    public CompletableFuture<Response> send(String method, URI uri, Map<String, String> headers, byte[] body,
                                            int offset, int length, Duration timeout) {
        CompletableFuture<Response> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(new IOException("HTTP client is closed"));
            return result;
        }
        Exchange exchange = new Exchange(method, uri, headers, body, offset, length, result, null);
        if (!onLoop(() -> exchange.start(timeout))) {
            result.completeExceptionally(new IOException("HTTP client is closed"));
        }
        return result;
    }

    public CompletableFuture<Response> send(String method, URI uri, Map<String, String> headers, byte[] body,
                                            Duration timeout) {
        return send(method, uri, headers, body, 0, body == null ? 0 : body.length, timeout);
    }

    /** The blocking form of {@link #send}: waits on the caller's thread; the call's own timeout bounds the wait. */
    public Response sendBlocking(String method, URI uri, Map<String, String> headers, byte[] body, int offset,
                                 int length, Duration timeout) throws IOException, InterruptedException {
        CompletableFuture<Response> call = send(method, uri, headers, body, offset, length, timeout);
        try {
            return call.get();
        } catch (InterruptedException e) {
            call.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException(cause.getMessage(), cause);
        }
    }

    /** A GET whose 200 body is read line by line as it arrives, with no timeout (the caller watches for silence). */
    public Cancellable stream(URI uri, Map<String, String> headers, StreamListener listener) {
        CompletableFuture<Response> done = new CompletableFuture<>();
        Exchange exchange = new Exchange("GET", uri, headers, null, 0, 0, done, listener);
        if (closed || !onLoop(() -> exchange.start(null))) {
            listener.onEnd(new IOException("HTTP client is closed"));   // on the caller's thread: the loop is gone
        }
        return () -> onLoop(exchange::cancel);
    }

    /** @return false when the client is closed and its loop takes no more work */
    private boolean onLoop(Runnable task) {
        try {
            loop.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Closes every connection and stops the event loop; calls in flight fail. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private SslContext tls() throws SSLException {
        return tls != null ? tls : (tls = SslContextBuilder.forClient().build());
    }

    private static String key(URI uri) {
        return uri.getScheme() + "://" + uri.getHost() + ":" + port(uri);
    }

    private static int port(URI uri) {
        return uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    /**
     * One call on one connection, from request to the end of its answer. Event loop only. It is the connection's last
     * handler while it runs, and removes itself when the connection goes back to the pool.
     */
    private final class Exchange extends ChannelInboundHandlerAdapter {
        private final String method;
        private final URI uri;
        private final Map<String, String> headers;
        private final byte[] body;
        private final int offset;
        private final int length;
        private final CompletableFuture<Response> result;
        private final StreamListener listener;
        private Channel channel;
        private ScheduledFuture<?> timer;
        private boolean pooled;          // the current connection came from the pool
        private boolean answered;        // a response head arrived
        private boolean finished;
        private int status;
        private boolean keepAlive;
        private ByteArrayOutputStream received;

        Exchange(String method, URI uri, Map<String, String> headers, byte[] body, int offset, int length,
                 CompletableFuture<Response> result, StreamListener listener) {
            this.method = method;
            this.uri = uri;
            this.headers = headers;
            this.body = body;
            this.offset = offset;
            this.length = length;
            this.result = result;
            this.listener = listener;
        }

        void start(Duration timeout) {
            if (timeout != null) {
                timer = loop.schedule(() -> fail(new HttpTimeoutException("request timed out")),
                        timeout.toNanos(), TimeUnit.NANOSECONDS);
            }
            // A caller that gives up (cancel, interrupted get) frees the connection.
            result.whenComplete((r, e) -> {
                if (e instanceof CancellationException) {
                    onLoop(this::cancel);
                }
            });
            ArrayDeque<Channel> pool = idle.get(key(uri));
            Channel reuse;
            while (pool != null && (reuse = pool.pollFirst()) != null) {
                if (reuse.isActive()) {
                    pooled = true;
                    attach(reuse);
                    return;
                }
            }
            connect();
        }

        private void connect() {
            pooled = false;
            StartupTrace.mark("http client: connecting for", method, uri);
            boolean https = "https".equalsIgnoreCase(uri.getScheme());
            SslContext ssl;
            try {
                ssl = https ? tls() : null;
            } catch (SSLException e) {
                fail(e);
                return;
            }
            String host = uri.getHost();
            int port = port(uri);
            ChannelFuture connecting = bootstrap.clone().handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    if (ssl != null) {
                        ch.pipeline().addLast(ssl.newHandler(ch.alloc(), host, port));
                    }
                    ch.pipeline().addLast(new HttpClientCodec());
                }
            }).connect(host, port);
            channel = connecting.channel();
            connecting.addListener(f -> {
                if (finished) {
                    connecting.channel().close();
                } else if (!f.isSuccess()) {
                    Throwable cause = f.cause();
                    fail(cause instanceof ConnectTimeoutException
                            ? new HttpConnectTimeoutException("HTTP connect timed out after " + connectTimeout.toMillis()
                            + " ms: " + host + ":" + port) : cause);
                } else {
                    Channel ch = connecting.channel();
                    // Once per connection: a pooled connection the server closes leaves the pool when noticed.
                    ch.closeFuture().addListener(gone -> {
                        ArrayDeque<Channel> pool = idle.get(key(uri));
                        if (pool != null) {
                            pool.remove(ch);
                        }
                    });
                    attach(ch);
                }
            });
        }

        private void attach(Channel ch) {
            channel = ch;
            ch.pipeline().addLast(this);
            String path = requestTarget(uri);
            // One copy, into a pooled direct buffer the socket writes as is (a heap copy was copied again by Netty
            // into a direct one, and was a fresh array per call: a span batch is hundreds of KB). Copied here, on the
            // event loop, before the call can finish: a caller that reuses its array (the span exporter) may refill
            // it as soon as the call has finished, even if it timed out with the write still pending.
            ByteBuf content = body == null ? Unpooled.EMPTY_BUFFER
                    : ch.alloc().directBuffer(length).writeBytes(body, offset, length);
            FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(method), path,
                    content);
            try {
                request.headers().set(HttpHeaderNames.HOST, uri.getHost() + ":" + port(uri));
                headers.forEach(request.headers()::set);
            } catch (RuntimeException e) {
                request.release();   // a header Netty refuses: the body was never handed to the channel
                throw e;
            }
            if (body != null || !"GET".equals(method) && !"DELETE".equals(method)) {
                HttpUtil.setContentLength(request, length);
            }
            ch.writeAndFlush(request).addListener(f -> {
                if (!f.isSuccess() && ch == channel) {   // not a connection this call already gave up for a new one
                    broken(f.cause());
                }
            });
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (finished) {
                    return;
                }
                if (msg instanceof HttpResponse response) {
                    if (response.status().code() == 100) {
                        return;   // 100 Continue: the real answer follows
                    }
                    answered = true;
                    status = response.status().code();
                    StartupTrace.mark("http client: answer", status, "to", method, uri);
                    keepAlive = HttpUtil.isKeepAlive(response);
                    received = new ByteArrayOutputStream();
                }
                if (msg instanceof HttpContent content && received != null) {
                    ByteBuf bytes = content.content();
                    if (listener != null && status == 200) {
                        lines(bytes);
                    } else if (received.size() + bytes.readableBytes() > MAX_BODY) {
                        fail(new IOException("answer from " + key(uri) + " exceeds " + MAX_BODY + " bytes"));
                        return;
                    } else {
                        bytes.readBytes(received, bytes.readableBytes());
                    }
                    if (content instanceof LastHttpContent) {
                        complete();
                    }
                }
            } catch (IOException e) {
                fail(e);
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        /** Splits a 200 stream into lines; a partial line waits in {@link #received} for the rest. */
        private void lines(ByteBuf bytes) {
            while (bytes.isReadable() && !finished) {
                int newline = bytes.indexOf(bytes.readerIndex(), bytes.writerIndex(), (byte) '\n');
                int end = newline < 0 ? bytes.writerIndex() : newline;
                int n = end - bytes.readerIndex();
                if (received.size() + n > MAX_BODY) {
                    fail(new IOException("a line from " + key(uri) + " exceeds " + MAX_BODY + " bytes"));
                    return;
                }
                try {
                    bytes.readBytes(received, n);
                } catch (IOException e) {
                    throw new IllegalStateException(e);   // a ByteArrayOutputStream does not throw
                }
                if (newline < 0) {
                    return;
                }
                bytes.skipBytes(1);
                byte[] line = received.toByteArray();
                received.reset();
                int len = line.length > 0 && line[line.length - 1] == '\r' ? line.length - 1 : line.length;
                listener.onLine(new String(line, 0, len, StandardCharsets.UTF_8));
            }
        }

        private void complete() {
            if (listener != null && status == 200 && received.size() > 0) {
                byte[] rest = received.toByteArray();
                received.reset();
                listener.onLine(new String(rest, StandardCharsets.UTF_8));   // a last line without its newline
            }
            Channel ch = channel;
            boolean reusable = keepAlive && listener == null && !closed;
            finish();
            if (listener != null) {
                if (status != 200) {
                    listener.onRefused(status, received.toByteArray());
                }
                listener.onEnd(null);
            } else {
                result.complete(new Response(status, received.toByteArray()));
            }
            if (reusable) {
                ch.pipeline().remove(this);
                ArrayDeque<Channel> pool = idle.computeIfAbsent(key(uri), k -> new ArrayDeque<>());
                pool.addFirst(ch);
            } else {
                ch.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (ctx.channel() == channel) {
                broken(new ClosedChannelException());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (ctx.channel() == channel) {
                broken(cause);
            }
        }

        /** The connection failed mid-call; a pooled one that never answered gets one retry on a fresh connection. */
        private void broken(Throwable cause) {
            if (finished) {
                return;
            }
            if (pooled && !answered) {
                Channel old = channel;
                old.pipeline().remove(this);
                old.close();
                connect();
                return;
            }
            if (answered && listener == null && !keepAlive && received != null && status != 0
                    && cause instanceof ClosedChannelException) {
                complete();   // an answer without length, ended by closing the connection
                return;
            }
            Throwable tlsFailure = cause;
            while (tlsFailure != null && !(tlsFailure instanceof SSLException)) {
                tlsFailure = tlsFailure.getCause();   // Netty wraps a failed handshake in a DecoderException
            }
            fail(tlsFailure != null ? tlsFailure : cause instanceof ClosedChannelException
                    ? new IOException("connection to " + key(uri) + " closed before the answer ended", cause) : cause);
        }

        private void fail(Throwable cause) {
            if (finished) {
                return;
            }
            finish();
            if (channel != null) {
                channel.close();
            }
            if (listener != null) {
                listener.onEnd(cause);
            } else {
                result.completeExceptionally(cause);
            }
        }

        void cancel() {
            if (finished) {
                return;
            }
            finish();
            if (channel != null) {
                channel.close();
            }
            result.cancel(false);
        }

        private void finish() {
            finished = true;
            if (timer != null) {
                timer.cancel(false);
            }
        }
    }
}
