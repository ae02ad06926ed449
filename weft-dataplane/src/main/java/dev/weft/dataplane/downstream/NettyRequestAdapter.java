package dev.weft.dataplane.downstream;

import dev.weft.dataplane.http.Http1Messages;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.StrictHttpRequestDecoder;
import dev.weft.protocol.WmpHeaders;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;

import java.util.Locale;
import java.util.Map;

/**
 * Turns Netty's decoded request objects into Weft's message model ({@link Http1Messages}). A bridge while Netty's
 * decoder still reads requests on the listeners; {@code Http1RequestDecoder} produces the model directly.
 *
 * <p>Thread: the connection's Worker loop. Buffers: each HTTP content is released here after its body bytes are
 * passed on retained.
 */
final class NettyRequestAdapter extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpRequest req) {
                if (req.decoderResult().isFailure()) {
                    ctx.fireChannelRead(rejection(req.decoderResult().cause()));
                    return;
                }
                WmpHeaders fields = new WmpHeaders(req.headers().size());
                String host = null;
                for (Map.Entry<String, String> e : req.headers()) {
                    String name = e.getKey().toLowerCase(Locale.ROOT);
                    if (name.equals("host")) {
                        host = host == null ? e.getValue() : host;
                    } else {
                        fields.add(name, e.getValue());
                    }
                }
                ctx.fireChannelRead(new RequestHead(req.method().name(), host, req.uri(), fields)
                        .keepAlive(HttpUtil.isKeepAlive(req)));
            }
            if (msg instanceof HttpContent c) {
                if (c.content().isReadable()) {
                    ctx.fireChannelRead(c.content().retain());
                }
                if (c instanceof LastHttpContent) {
                    ctx.fireChannelRead(Http1Messages.END);
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private static Http1Messages.Rejected rejection(Throwable cause) {
        if (cause instanceof TooLongHttpHeaderException || cause instanceof TooLongFrameException && !(cause instanceof TooLongHttpLineException)) {
            return new Http1Messages.Rejected(431, "headers-too-large", "request headers too large: " + cause.getMessage());
        }
        if (cause instanceof TooLongHttpLineException) {
            return new Http1Messages.Rejected(414, "uri-too-long", "request line too long: " + cause.getMessage());
        }
        if (StrictHttpRequestDecoder.CONFLICTING_FRAMING.equals(cause.getMessage())) {
            return new Http1Messages.Rejected(400, "conflicting-framing",
                    "rejected: request has both Content-Length and Transfer-Encoding (possible request smuggling)");
        }
        return new Http1Messages.Rejected(400, "bad-request", "malformed request: " + cause.getMessage());
    }
}
