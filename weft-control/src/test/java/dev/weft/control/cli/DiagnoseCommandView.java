package dev.weft.control.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.control.diagnose.Diagnosis;

import java.io.IOException;

/** Test access to {@link DiagnoseCommand}'s rendering of a {@code /v1/diagnose} answer. */
public final class DiagnoseCommandView {
    private DiagnoseCommandView() {}

    public static String render(String json) throws IOException {
        return DiagnoseCommand.render(new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
                .readValue(json, Diagnosis.class));
    }
}
