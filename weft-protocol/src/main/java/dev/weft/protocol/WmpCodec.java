package dev.weft.protocol;

import io.netty.channel.ChannelPipeline;

/**
 * Puts the WMP codec into a pipeline, under names other handlers can refer to.
 *
 * <p>Thread: call it where the pipeline is built (a channel initializer, on the channel's event loop); the handlers it
 * adds then run on that loop. Buffers: none held here; the decoder and encoder say who releases each frame's body.
 */
public final class WmpCodec {
    public static final String DECODER_NAME = "wmp-decoder";
    public static final String ENCODER_NAME = "wmp-encoder";

    private WmpCodec() {}

    /**
     * Appends a {@link WmpFrameDecoder} ({@value #DECODER_NAME}) and a {@link WmpFrameEncoder}
     * ({@value #ENCODER_NAME}) to the end of {@code pipeline}. Handlers added after them see {@link WmpFrame}s in
     * both directions. Call from the channel's initializer; the decoder holds per-connection state and is never
     * shared.
     */
    public static void install(ChannelPipeline pipeline, WmpLimits limits, WmpCodecMetrics metrics) {
        pipeline.addLast(DECODER_NAME, new WmpFrameDecoder(limits, metrics));
        pipeline.addLast(ENCODER_NAME, new WmpFrameEncoder(metrics));
    }
}
