package dev.weft.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Blocking control-path HTTP calls of the experiment (readiness, stats); never on the load path. */
final class HttpProbe implements AutoCloseable {
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(1))
            .build();

    /** The status and body, or throws with the reason the call failed (refused, timed out...). */
    HttpResponse<String> get(URI uri, Duration timeout) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A POST without a body (an admin action), with its status and body, or throws as {@link #get}. */
    HttpResponse<String> post(URI uri, Duration timeout) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(uri).timeout(timeout).POST(HttpRequest.BodyPublishers.noBody())
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        client.close();
    }
}
