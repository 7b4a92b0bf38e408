// Put in every test tab before the app loads (Playwright's add_init_script): it follows the
// app's websocket so that a test can wait for what the server reports (the run a click asked for
// has finished) instead of waiting a fixed time and hoping the run has begun.
//
// window.__scriptRuns.pending is true from each rerun the page asks for (BackMsg.rerun_script,
// field 11) until a run that started after it (ForwardMsg.new_session, field 4) has finished
// (ForwardMsg.script_finished, field 6, any status but FINISHED_EARLY_FOR_RERUN, 2).  Two
// requests the server merges into one run, a run interrupted by the next request and a run that
// calls st.rerun() all end in exactly one such finish.
(() => {
  const runs = { pending: false, started: false };
  window.__scriptRuns = runs;

  function bytesOf(data) {
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    return null;  // text or a Blob: not one of Streamlit's messages
  }

  // The top-level fields of a protobuf message, as [field number, varint value or null].
  function topFields(bytes) {
    const fields = [];
    let i = 0;
    const varint = () => {
      let value = 0, scale = 1, byte;
      do {
        byte = bytes[i++];
        value += (byte & 0x7f) * scale;
        scale *= 128;
      } while (byte & 0x80 && i < bytes.length);
      return value;
    };
    while (i < bytes.length) {
      const key = varint(), field = Math.floor(key / 8), wire = key % 8;
      if (wire === 0) fields.push([field, varint()]);
      else if (wire === 2) { const length = varint(); i += length; fields.push([field, null]); }
      else if (wire === 1) { i += 8; fields.push([field, null]); }
      else if (wire === 5) { i += 4; fields.push([field, null]); }
      else break;  // groups: not in Streamlit's protocol
    }
    return fields;
  }

  const Native = window.WebSocket;
  const send = Native.prototype.send;
  Native.prototype.send = function (data) {
    const bytes = bytesOf(data);
    if (bytes && topFields(bytes).some(([field]) => field === 11)) {
      runs.pending = true;
      runs.started = false;
    }
    return send.call(this, data);
  };

  class Watched extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const bytes = bytesOf(event.data);
        if (!bytes) return;
        for (const [field, value] of topFields(bytes)) {
          if (field === 4 && runs.pending) runs.started = true;
          if (field === 6 && value !== 2 && runs.started) runs.pending = false;
        }
      });
    }
  }
  window.WebSocket = Watched;
})();
