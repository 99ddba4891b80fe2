// The one object every workspace module receives: the server payload, the page's fixed facts and the
// mutable editing state. Created once by the entry module (workspace.js) and passed explicitly.

export function createContext(payload) {
  const pass = payload.pass_no;
  return {
    payload,
    pass,
    editable: payload.editable && payload.state.status !== "submitted" && payload.state.status !== "approved",
    storeKey: `physalign:ws:${payload.user.id}:${payload.problem.problem_id}:${pass}`,
    earlier: payload.earlier || {},
    // From the server's validator: record kind -> ID prefix ("visual" -> "v") and collection -> ID prefix.
    idPrefix: payload.id_prefixes,
    collectionPrefix: payload.collection_id_prefixes,
    relationPredicates: payload.relation_predicates,
    state: {
      doc: structuredClone(payload.document),
      version: payload.state.version,
      status: payload.state.status,
      issues: payload.issues || [],
      undo: [], redo: [], lastCoalesce: null, lastCommitAt: 0,
      selected: null, // {col, id}
      entity: null, // selected physical id (Pass 2/3/4 highlight)
      imageIndex: 0, tool: "select", zoom: 1, tx: 0, ty: 0,
      dirty: false, saving: false, saveAgain: false, retryIn: 0, retryTimer: null, saveTimer: null,
      lastType: "text_glyph", selection: null,
      keyToken: 0, // bumped by every key press (see focusField)
      createdAt: 0, // when the last region was drawn (see onSelection)
    },
    // The Annotorious canvas: the annotator, the geometry shown per region id, and the echo guard.
    canvas: {
      anno: null,
      shown: new Map(),
      syncing: false,
      style: null, // the region style callback, made once by mountCanvas
      viewport: document.getElementById("ws-viewport"),
      stage: document.getElementById("ws-stage"),
    },
  };
}
