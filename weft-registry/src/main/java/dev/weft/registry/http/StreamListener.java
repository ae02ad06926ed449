package dev.weft.registry.http;

/**
 * Receives a {@link SmallHttpClient#stream} (a GET whose 200 body is read line by line as it arrives), on the client's
 * event loop.
 */
public interface StreamListener {
    /** One line of a 200 answer's body, without its line end. */
    void onLine(String line);

    /** The answer was not 200: its status and whole body. {@link #onEnd} follows. */
    void onRefused(int status, byte[] body);

    /** The exchange is over: ended by the server ({@code error} null), broken, or never connected. Called once. */
    void onEnd(Throwable error);
}
