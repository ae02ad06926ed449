package dev.weft.control;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.weft.registry.Endpoint;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The HTTP API's JSON: request bodies, responses and watch lines. Parsing is strict (unknown fields are errors) because
 * people write these bodies by hand with curl, and "unknown field 'ttlMilis'" beats a silently ignored typo.
 */
final class ControlJson {
    private ControlJson() {}

    static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    record LeaseRequest(Long ttlMillis) {}

    record EndpointRequest(String service, String id, String host, Integer port, Integer weight, Integer capacity,
                           Map<String, String> metadata, String leaseId) {}

    record SnapshotMessage(String type, String service, long revision, List<Endpoint> endpoints) {
        static SnapshotMessage of(ControlBackend.ServiceSnapshot s) {
            return new SnapshotMessage("snapshot", s.service(), s.revision(), s.endpoints());
        }
    }

    record Heartbeat(String type) {}

    record LeaseList(List<ControlBackend.LeaseInfo> leases) {}

    /** {@code dataDir} only for the embedded backend (and kept for the clients that read it before there was another). */
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    record Health(String status, String backend, String store, long revision, int services, int leases,
                  int watchers, long errors, String lastError, String dataDir) {
        static Health of(ControlBackend.Connectivity c, ControlBackend.Counts n) {
            return new Health(c.connected() ? "ok" : "degraded", c.backend(), c.store(), n.revision(), n.services(),
                    n.leases(), n.watchers(), c.errors(), c.lastError(),
                    c.backend().equals("embedded") ? c.store() : null);
        }
    }

    record Error(String error, String code) {}

    static byte[] bytes(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + value.getClass().getSimpleName(), e);
        }
    }

    /** One NDJSON line: the value and a newline. */
    static byte[] line(Object value) {
        byte[] json = bytes(value);
        byte[] out = new byte[json.length + 1];
        System.arraycopy(json, 0, out, 0, json.length);
        out[json.length] = '\n';
        return out;
    }

    static <T> T parse(String body, Class<T> type, String example) {
        if (body.isBlank()) {
            throw ControlException.badRequest("missing JSON body (expected e.g. " + example + ")");
        }
        try {
            return MAPPER.readValue(body, type);
        } catch (UnrecognizedPropertyException e) {
            String known = e.getKnownPropertyIds() == null ? "" : e.getKnownPropertyIds().stream()
                    .map(String::valueOf).sorted().collect(Collectors.joining(", "));
            throw ControlException.badRequest("unknown field '" + e.getPropertyName() + "' (expected: " + known + ")");
        } catch (MismatchedInputException e) {
            String field = e.getPath().isEmpty() ? "body" : "field '" + e.getPath().getLast().getFieldName() + "'";
            throw ControlException.badRequest("wrong type for " + field + ": " + e.getOriginalMessage()
                    + " (expected e.g. " + example + ")");
        } catch (JacksonException e) {
            throw ControlException.badRequest("invalid JSON body: " + e.getOriginalMessage()
                    + " (expected e.g. " + example + ")");
        }
    }
}
