{% verbatim %}
/* The courier web app (docs/contract.md "Couriers", "The courier web app").
   Every event the courier takes goes into a queue kept in localStorage, with its own
   Idempotency-Key and the moment it was taken (`at`); the queue is sent in order, one event at a
   time, whenever the network allows. A refusal (4xx) is shown and dropped; the network, a 5xx,
   408, 429 or a key still in progress keep the event for the next try. */
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("courier-config").textContent);
  const KEYS = {
    token: "courier.token",
    queue: "courier.queue",
    route: "courier.route",
    points: "courier.points",
    alerts: "courier.alerts",
  };
  const STATUS_LABELS = {
    pending: "Pending",
    dispatching: "Dispatching",
    assigned: "To pick up",
    picked_up: "Picked up",
    in_transit: "On the way",
    delivered: "Delivered",
    failed: "Failed",
    cancelled: "Cancelled",
  };
  const EVENT_LABELS = {
    picked_up: "Picked up",
    in_transit: "On the way",
    arrived: "Arrived",
    delivered: "Delivered",
    failed: "Failed",
  };
  /* The status each event moves its order to (arrived moves it nowhere). */
  const EVENT_STATUS = {
    picked_up: "picked_up",
    in_transit: "in_transit",
    delivered: "delivered",
    failed: "failed",
  };
  /* The events the order's status machine allows in each status. */
  const ALLOWED_EVENTS = {
    assigned: ["picked_up", "failed"],
    picked_up: ["in_transit", "arrived", "failed"],
    in_transit: ["arrived", "delivered", "failed"],
  };
  const FINISHED = ["delivered", "failed", "cancelled"];
  const KEPT_CODES = ["idempotency_key_in_progress"];
  const MAX_PHOTOS = 10;
  const PHOTO_MAX_SIDE = 1600;
  const SIGNATURE_MAX_WIDTH = 600;
  const POSITION_FRESH_MS = 2 * 60 * 1000;
  const POINT_SPACING_MS = 30 * 1000;
  const POINT_MAX_AGE_MS = 23 * 60 * 60 * 1000;
  const MAX_POINTS = 100;

  const state = {
    token: localStorage.getItem(KEYS.token),
    route: null,
    routeFetchedAt: null,
    flushing: false,
    lastOutcome: null,
    sentCount: 0,
    retryTimer: null,
    retryAfterMs: 0,
    clockOffsetMs: 0,
    position: null,
    watchId: null,
    form: null,
    signed: false,
  };
  const kept = load(KEYS.route, null);
  if (kept && kept.route) {
    state.route = kept.route;
    state.routeFetchedAt = kept.fetchedAt;
  }

  function byId(id) {
    return document.getElementById(id);
  }

  /* Live regions announce changes only: the same text is not written again. */
  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  function element(tag, attributes, children) {
    const node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      const value = attributes[name];
      if (value === null || value === undefined || value === false) return;
      if (name === "text") node.textContent = value;
      else if (name === "className") node.className = value;
      else node.setAttribute(name, value === true ? "" : value);
    });
    (children || []).forEach(function (child) {
      if (child) node.append(child);
    });
    return node;
  }

  /* Storage: the queue, the token, the last route and the positions survive a reload. */
  function load(key, fallback) {
    try {
      const raw = localStorage.getItem(key);
      return raw === null ? fallback : JSON.parse(raw);
    } catch (error) {
      return fallback;
    }
  }

  function store(key, value) {
    try {
      localStorage.setItem(key, JSON.stringify(value));
      return true;
    } catch (error) {
      addAlert("This phone has no room left for the app's data: send the waiting events first.");
      return false;
    }
  }

  function queue() {
    return load(KEYS.queue, []);
  }

  function queueUpdate(change) {
    const items = change(queue());
    return store(KEYS.queue, items);
  }

  function randomKey() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return "courier-" + Array.from(bytes, function (b) {
      return b.toString(16).padStart(2, "0");
    }).join("");
  }

  /* The service's clock, as its Date header says: an event's `at` may not be ahead of it. */
  function noteServerClock(response) {
    const date = Date.parse(response.headers.get("Date") || "");
    if (!Number.isNaN(date)) {
      const offset = date - Date.now();
      state.clockOffsetMs = Math.abs(offset) > 30 * 1000 ? offset : 0;
    }
  }

  function serverNow() {
    return new Date(Date.now() + state.clockOffsetMs);
  }

  /* Times come in the zone's time with their offset: shown as written, whatever the phone's
     own time zone. */
  function clock(value) {
    const match = /^\d{4}-\d{2}-\d{2}T(\d{2}:\d{2})/.exec(value || "");
    return match ? match[1] : "";
  }

  function dayName(date) {
    const day = new Date(date + "T00:00:00Z");
    if (Number.isNaN(day.getTime())) return date;
    return new Intl.DateTimeFormat("en-GB", {
      weekday: "short", day: "numeric", month: "short", timeZone: "UTC",
    }).format(day);
  }

  function money(amount) {
    return Number(amount).toFixed(2);
  }

  function messageOf(body, status) {
    if (body && body.message) {
      return Array.isArray(body.message) ? body.message.join("; ") : String(body.message);
    }
    return "the service answered " + status;
  }

  async function api(path, options) {
    const headers = Object.assign(
      { Authorization: "Bearer " + state.token, Accept: "application/json" },
      (options && options.headers) || {}
    );
    const response = await fetch(config.apiBase + path, Object.assign({}, options, {
      headers: headers,
      cache: "no-store",
      credentials: "omit",
    }));
    noteServerClock(response);
    let body = null;
    try {
      body = await response.json();
    } catch (error) {
      body = null;
    }
    return {
      status: response.status,
      ok: response.ok,
      body: body,
      retryAfterMs: (Number(response.headers.get("Retry-After")) || 0) * 1000,
    };
  }

  /* Notices and alerts */
  function notify(text) {
    const notice = byId("notice");
    notice.textContent = text;
    notice.hidden = !text;
  }

  function addAlert(text) {
    const alerts = load(KEYS.alerts, []);
    alerts.push({ id: randomKey(), text: text });
    try {
      localStorage.setItem(KEYS.alerts, JSON.stringify(alerts.slice(-20)));
    } catch (error) {
      /* no room: shown for now, not kept */
    }
    renderAlerts(alerts);
  }

  function renderAlerts(alerts) {
    const box = byId("alerts");
    box.replaceChildren();
    (alerts || load(KEYS.alerts, [])).forEach(function (alert) {
      const dismiss = element("button", {
        type: "button", className: "small quiet", text: "Dismiss", "data-alert": alert.id,
      });
      dismiss.addEventListener("click", function () {
        const left = load(KEYS.alerts, []).filter(function (a) { return a.id !== alert.id; });
        store(KEYS.alerts, left);
        renderAlerts(left);
      });
      box.append(element("div", { className: "alert" }, [
        element("p", { text: alert.text }), dismiss,
      ]));
    });
  }

  /* Signing in: once by typing the token, or by the link /courier/#token=... */
  function tokenFromLink() {
    if (!location.hash) return null;
    const token = new URLSearchParams(location.hash.slice(1)).get("token");
    /* The token leaves the address bar (and the history) at once. */
    history.replaceState(null, "", location.pathname + location.search);
    return token ? token.trim() : null;
  }

  function signIn(token) {
    state.token = token;
    localStorage.setItem(KEYS.token, token);
    byId("sign-in-error").hidden = true;
    render();
    loadRoute().then(flush);
    watchPosition();
  }

  function signedOut(message) {
    localStorage.removeItem(KEYS.token);
    localStorage.removeItem(KEYS.route);
    state.token = null;
    state.route = null;
    const error = byId("sign-in-error");
    error.textContent = message || "";
    error.hidden = !message;
    closeForm();
    render();
  }

  /* The route */
  async function loadRoute() {
    if (!state.token) return;
    const sentBefore = state.sentCount;
    let answer;
    try {
      answer = await api("/route", { method: "GET" });
    } catch (error) {
      render();
      return;
    }
    if (answer.status === 401) {
      const waiting = queue().length;
      signedOut(
        "Invalid or missing token. Sign in again with a new link from your dispatcher" +
          (waiting ? "; the " + waiting + " events not sent yet are kept." : ".")
      );
      return;
    }
    if (!answer.ok) {
      notify("The route could not be read: " + messageOf(answer.body, answer.status));
      return;
    }
    if (state.flushing || state.sentCount !== sentBefore) {
      /* Events went out meanwhile: this answer may predate them. */
      setTimeout(loadRoute, 1000);
      return;
    }
    state.route = answer.body;
    state.routeFetchedAt = Date.now();
    store(KEYS.route, { route: state.route, fetchedAt: state.routeFetchedAt });
    render();
  }

  function stopUpdate(stop) {
    if (!state.route) return;
    state.route.stops = state.route.stops.map(function (known) {
      return known.orderId === stop.orderId ? Object.assign({}, known, stop) : known;
    });
    store(KEYS.route, { route: state.route, fetchedAt: state.routeFetchedAt });
  }

  /* A stop as the courier sees it: its status after the events still waiting in the queue. */
  function shownStatus(stop, waiting) {
    return waiting.reduce(function (status, item) {
      return EVENT_STATUS[item.type] || status;
    }, stop.status);
  }

  /* Taking an event: into the queue first, then sent when possible. */
  function takeEvent(stop, type, details) {
    const at = serverNow().toISOString();
    const body = Object.assign({ type: type, at: at }, (details && details.body) || {});
    const position = state.position;
    if (position && Date.now() - position.takenAt < POSITION_FRESH_MS) {
      body.location = {
        lat: position.point.lat, lng: position.point.lng, accuracyM: position.point.accuracyM,
      };
    }
    const item = {
      key: randomKey(),
      orderId: stop.orderId,
      ref: stop.externalRef,
      type: type,
      body: body,
      photos: (details && details.photos) || [],
      photoIds: [],
    };
    if (!queueUpdate(function (items) { return items.concat([item]); })) return false;
    notify(
      EVENT_LABELS[type] + " " + stop.externalRef +
        (navigator.onLine ? ": sending" : ": queued, sent when back online")
    );
    render();
    flush();
    return true;
  }

  function scheduleRetry(delayMs) {
    clearTimeout(state.retryTimer);
    state.retryTimer = setTimeout(flush, Math.max(delayMs || 0, config.retryMs));
  }

  /* One sender at a time (a Web Lock across tabs where the browser has them). */
  async function flush() {
    if (state.flushing || !state.token) return;
    state.flushing = true;
    clearTimeout(state.retryTimer);
    render();
    try {
      if (navigator.locks) await navigator.locks.request("courier-queue", sendQueue);
      else await sendQueue();
    } finally {
      state.flushing = false;
      render();
    }
    /* An event taken while this send was ending goes at once; a kept one waits for the timer. */
    if (state.token && queue().length) {
      if (state.lastOutcome === "kept") scheduleRetry(state.retryAfterMs);
      else setTimeout(flush, 0);
    }
  }

  async function sendQueue() {
    for (;;) {
      if (!state.token) return;
      const items = queue();
      state.lastOutcome = null;
      if (!items.length) return;
      const item = items[0];
      const outcome = await sendItem(item);
      state.lastOutcome = outcome;
      if (outcome === "sent" || outcome === "dropped") {
        queueUpdate(function (now) {
          return now.filter(function (other) { return other.key !== item.key; });
        });
        render();
        continue;
      }
      return;
    }
  }

  function photoBlob(dataUrl) {
    const comma = dataUrl.indexOf(",");
    const type = dataUrl.slice(5, dataUrl.indexOf(";"));
    const text = atob(dataUrl.slice(comma + 1));
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
    return new Blob([bytes], { type: type });
  }

  function itemSave(item) {
    queueUpdate(function (items) {
      return items.map(function (other) { return other.key === item.key ? item : other; });
    });
  }

  async function sendItem(item) {
    try {
      while (item.photos.length) {
        const form = new FormData();
        form.append("photo", photoBlob(item.photos[0]), "photo.jpg");
        const uploaded = await api("/photos", { method: "POST", body: form });
        if (!uploaded.ok) return judge(uploaded, item);
        item.photoIds.push(uploaded.body.photoId);
        item.photos.shift();
        itemSave(item);
      }
      const body = Object.assign({}, item.body);
      if (item.photoIds.length) {
        body.proof = Object.assign({}, body.proof || {}, { photoIds: item.photoIds });
      }
      const answer = await api("/orders/" + encodeURIComponent(item.orderId) + "/events", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Idempotency-Key": item.key },
        body: JSON.stringify(body),
      });
      if (!answer.ok) return judge(answer, item);
      state.sentCount += 1;
      stopUpdate(answer.body);
      notify(EVENT_LABELS[item.type] + " " + item.ref + ": sent");
      return "sent";
    } catch (error) {
      return "kept"; /* no network: the event waits for the next try */
    }
  }

  function judge(answer, item) {
    const code = answer.body && answer.body.code;
    if (answer.status === 401) {
      signedOut("Invalid or missing token. Sign in again: the events not sent yet are kept.");
      return "stopped";
    }
    if (
      answer.status >= 500 || answer.status === 408 || answer.status === 429 ||
      KEPT_CODES.indexOf(code) !== -1
    ) {
      state.retryAfterMs = answer.retryAfterMs;
      return "kept";
    }
    addAlert(
      "Not sent: " + EVENT_LABELS[item.type] + " " + item.ref + ": " +
        messageOf(answer.body, answer.status)
    );
    return "dropped";
  }

  /* Positions: kept as they come (one each 30 seconds at most), sent in batches. */
  function watchPosition() {
    if (!("geolocation" in navigator) || state.watchId !== null || !state.token) return;
    state.watchId = navigator.geolocation.watchPosition(onPosition, function () {}, {
      enableHighAccuracy: true, maximumAge: 30000, timeout: 60000,
    });
  }

  function onPosition(position) {
    const coords = position.coords;
    const point = {
      lat: coords.latitude,
      lng: coords.longitude,
      at: new Date(position.timestamp + state.clockOffsetMs).toISOString(),
      accuracyM: Number.isFinite(coords.accuracy) ? Math.min(coords.accuracy, 100000) : null,
    };
    if (Number.isFinite(coords.speed) && coords.speed <= 100) point.speedMps = coords.speed;
    if (Number.isFinite(coords.heading)) point.heading = coords.heading;
    state.position = { point: point, takenAt: Date.now() };
    const points = load(KEYS.points, []);
    const last = points[points.length - 1];
    if (last && Date.parse(point.at) - Date.parse(last.at) < POINT_SPACING_MS) return;
    store(KEYS.points, points.concat([point]).slice(-MAX_POINTS));
  }

  async function sendPoints() {
    if (!state.token || !navigator.onLine) return;
    const oldest = Date.now() + state.clockOffsetMs - POINT_MAX_AGE_MS;
    const points = load(KEYS.points, []).filter(function (p) { return Date.parse(p.at) > oldest; });
    if (!points.length) return;
    try {
      const answer = await api("/locations", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ points: points }),
      });
      if (answer.status >= 500 || answer.status === 429 || answer.status === 401) return;
    } catch (error) {
      return;
    }
    const sent = points[points.length - 1].at;
    store(KEYS.points, load(KEYS.points, []).filter(function (p) { return p.at > sent; }));
  }

  /* The proof form of delivered and failed */
  const signature = (function () {
    const canvas = byId("signature-pad");
    let last = null;

    function context() {
      return canvas.getContext("2d");
    }

    function reset() {
      const ratio = window.devicePixelRatio || 1;
      const box = canvas.getBoundingClientRect();
      canvas.width = Math.max(1, Math.round(box.width * ratio));
      canvas.height = Math.max(1, Math.round(box.height * ratio));
      const ctx = context();
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, box.width, box.height);
      ctx.lineWidth = 2.5;
      ctx.lineCap = "round";
      ctx.lineJoin = "round";
      ctx.strokeStyle = "#111111";
      state.signed = false;
    }

    function point(event) {
      const box = canvas.getBoundingClientRect();
      return { x: event.clientX - box.left, y: event.clientY - box.top };
    }

    canvas.addEventListener("pointerdown", function (event) {
      event.preventDefault();
      canvas.setPointerCapture(event.pointerId);
      last = point(event);
    });
    canvas.addEventListener("pointermove", function (event) {
      if (!last) return;
      const next = point(event);
      const ctx = context();
      ctx.beginPath();
      ctx.moveTo(last.x, last.y);
      ctx.lineTo(next.x, next.y);
      ctx.stroke();
      last = next;
      state.signed = true;
    });
    ["pointerup", "pointercancel", "lostpointercapture"].forEach(function (name) {
      canvas.addEventListener(name, function () { last = null; });
    });
    byId("signature-clear").addEventListener("click", reset);

    /* A PNG data URL of at most SIGNATURE_MAX_WIDTH pixels across (the API takes 200 KB). */
    function image() {
      if (!state.signed) return null;
      const scale = Math.min(1, SIGNATURE_MAX_WIDTH / canvas.width);
      if (scale === 1) return canvas.toDataURL("image/png");
      const out = document.createElement("canvas");
      out.width = Math.round(canvas.width * scale);
      out.height = Math.round(canvas.height * scale);
      out.getContext("2d").drawImage(canvas, 0, 0, out.width, out.height);
      return out.toDataURL("image/png");
    }

    return { reset: reset, image: image };
  })();

  /* A photo as a JPEG data URL, scaled to PHOTO_MAX_SIDE: it waits in the queue with its
     event (localStorage holds text) and is uploaded just before it. */
  async function photoAsJpeg(file) {
    const bitmap = await createImageBitmap(file);
    const scale = Math.min(1, PHOTO_MAX_SIDE / Math.max(bitmap.width, bitmap.height));
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, Math.round(bitmap.width * scale));
    canvas.height = Math.max(1, Math.round(bitmap.height * scale));
    canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    if (bitmap.close) bitmap.close();
    return canvas.toDataURL("image/jpeg", 0.82);
  }

  function renderPhotos() {
    const list = byId("photo-list");
    list.replaceChildren();
    (state.form ? state.form.photos : []).forEach(function (photo, index) {
      const remove = element("button", {
        type: "button", className: "small quiet", text: "Remove",
        "aria-label": "Remove photo " + (index + 1),
      });
      remove.addEventListener("click", function () {
        state.form.photos.splice(index, 1);
        renderPhotos();
      });
      list.append(element("li", {}, [
        element("img", { src: photo, alt: "Photo " + (index + 1) }), remove,
      ]));
    });
  }

  byId("photo-input").addEventListener("change", async function (event) {
    const input = event.target;
    const files = Array.from(input.files || []);
    input.value = "";
    for (const file of files) {
      if (!state.form) return;
      if (state.form.photos.length >= MAX_PHOTOS) {
        formError("At most " + MAX_PHOTOS + " photos.");
        break;
      }
      try {
        state.form.photos.push(await photoAsJpeg(file));
      } catch (error) {
        formError("This photo cannot be read: take another one.");
      }
    }
    renderPhotos();
  });

  function formError(text) {
    const error = byId("proof-error");
    error.textContent = text || "";
    error.hidden = !text;
  }

  function stopOf(orderId) {
    return ((state.route && state.route.stops) || []).find(function (stop) {
      return stop.orderId === orderId;
    });
  }

  function openForm(stop, type) {
    state.form = { orderId: stop.orderId, type: type, photos: [] };
    const delivering = type === "delivered";
    byId("proof-title").textContent = (delivering ? "Deliver " : "Could not deliver ") +
      stop.externalRef;
    byId("proof-stop").textContent = stop.address + " \u00b7 " + stop.recipientName;
    byId("reason-field").hidden = delivering;
    byId("recipient-field").hidden = !delivering;
    byId("barcode-field").hidden = !delivering;
    byId("signature-field").hidden = !delivering;
    byId("cash-field").hidden = !delivering || stop.codAmount === null;
    byId("proof-form").reset();
    byId("recipient-name").value = stop.recipientName || "";
    byId("barcode").required = Boolean(stop.expectedBarcode);
    if (stop.codAmount !== null) {
      byId("cash").value = money(stop.codAmount);
      document.querySelector("label[for=cash]").textContent =
        "Cash collected (to collect: " + money(stop.codAmount) + ")";
    }
    byId("proof-submit").textContent = delivering ? "Confirm delivery" : "Confirm failure";
    byId("proof-submit").className = delivering ? "primary" : "primary danger";
    formError("");
    renderPhotos();
    byId("route").hidden = true;
    byId("proof").hidden = false;
    if (delivering) signature.reset();
    window.scrollTo(0, 0);
    byId("proof-title").focus();
  }

  function closeForm() {
    const orderId = state.form && state.form.orderId;
    state.form = null;
    byId("proof").hidden = true;
    byId("route").hidden = !state.token;
    if (orderId) {
      const card = document.querySelector('[data-order-id="' + orderId + '"] h3');
      if (card) card.focus();
    }
  }

  byId("proof-cancel").addEventListener("click", closeForm);

  byId("proof-form").addEventListener("submit", function (event) {
    event.preventDefault();
    const form = state.form;
    const stop = form && stopOf(form.orderId);
    if (!stop) return closeForm();
    const note = byId("note").value.trim();
    const details = { body: {}, photos: form.photos.slice() };
    if (note) details.body.note = note;
    if (form.type === "failed") {
      const chosen = document.querySelector("input[name=failureReason]:checked");
      if (!chosen) return formError("Choose why the delivery failed.");
      details.body.failureReason = chosen.value;
    } else {
      const barcode = byId("barcode").value.trim();
      if (stop.expectedBarcode && barcode !== stop.expectedBarcode) {
        return formError(barcode ? "Barcode does not match this parcel." : "Scan or type the parcel's barcode.");
      }
      const proof = {};
      const recipient = byId("recipient-name").value.trim();
      if (recipient) proof.recipientName = recipient;
      if (barcode) proof.barcode = barcode;
      const drawn = signature.image();
      if (drawn) proof.signature = drawn;
      details.body.proof = proof;
      if (stop.codAmount !== null) {
        const cash = Number(byId("cash").value.trim().replace(",", "."));
        if (byId("cash").value.trim() === "" || !Number.isFinite(cash) || cash < 0) {
          return formError("Enter the cash collected.");
        }
        details.body.cashCollected = cash;
      }
    }
    if (takeEvent(stop, form.type, details)) closeForm();
  });

  function renderReasons() {
    const box = byId("reason-options");
    config.failureReasons.forEach(function (reason) {
      const id = "reason-" + reason.value;
      box.append(element("label", { className: "reason", for: id }, [
        element("input", { type: "radio", name: "failureReason", id: id, value: reason.value }),
        element("span", { text: reason.label }),
      ]));
    });
  }

  /* Rendering the route */
  function waitingNote(waiting) {
    if (!waiting.length) return null;
    return element("p", {
      className: "waiting",
      "data-waiting": String(waiting.length),
      text: waiting.length + (waiting.length === 1 ? " event" : " events") +
        " waiting to be sent: " + waiting.map(function (item) { return EVENT_LABELS[item.type]; }).join(", "),
    });
  }

  function stopCard(stop, waiting) {
    const status = shownStatus(stop, waiting);
    const finished = FINISHED.indexOf(status) !== -1;
    const heading = element("h3", { tabindex: "-1" }, [
      element("span", { className: "sequence", "aria-hidden": "true", text: stop.sequence || "" }),
      element("span", { className: "visually-hidden", text: "Stop " + (stop.sequence || "") + ", ETA " }),
      element("span", { className: "eta", text: clock(stop.eta) || "No ETA" }),
    ]);
    const head = element("div", { className: "stop-head" }, [
      heading,
      element("span", { className: "status status-" + status, text: STATUS_LABELS[status] || status }),
    ]);
    const place = (stop.lat !== null && stop.lng !== null)
      ? element("a", {
        className: "address",
        href: "geo:" + stop.lat + "," + stop.lng + "?q=" + stop.lat + "," + stop.lng +
          "(" + encodeURIComponent(stop.address) + ")",
        "aria-label": "Open in maps: " + stop.address,
        text: stop.address,
      })
      : element("p", { className: "address", text: stop.address });
    const recipient = element("p", { className: "facts" }, [
      element("strong", { text: stop.recipientName }),
    ]);
    if (stop.recipientPhone) {
      recipient.append(" \u00b7 ", element("a", {
        href: "tel:" + stop.recipientPhone.replace(/[^+0-9]/g, ""), text: stop.recipientPhone,
      }));
    }
    const window_ = clock(stop.windowStart) && clock(stop.windowEnd)
      ? "Window " + clock(stop.windowStart) + "\u2013" + clock(stop.windowEnd) : "";
    const facts = [window_, stop.externalRef, stop.packageSize ? "Size " + stop.packageSize : "",
      stop.kind === "pickup" ? "Pickup" : ""].filter(Boolean).join(" \u00b7 ");
    if (finished) {
      /* A finished stop keeps one line, so the next stops come up the screen. */
      return element("li", {
        className: "stop done" + (status === "failed" || status === "cancelled" ? " stop-failed" : ""),
        "data-order-id": stop.orderId,
        "data-status": status,
      }, [
        head,
        element("p", { className: "facts", text: stop.address + " \u00b7 " + stop.recipientName }),
        waitingNote(waiting),
      ]);
    }
    const body = element("div", { className: "stop-body" }, [
      place,
      recipient,
      element("p", { className: "facts", text: facts }),
      stop.notes ? element("p", { className: "facts", text: "Note: " + stop.notes }) : null,
      stop.codAmount !== null
        ? element("p", { className: "cash", text: "Collect cash: " + money(stop.codAmount) }) : null,
      stop.expectedBarcode
        ? element("p", { className: "facts", text: "Scan the parcel's barcode at delivery" }) : null,
    ]);
    const card = element("li", {
      className: "stop", "data-order-id": stop.orderId, "data-status": status,
    }, [head, body, waitingNote(waiting)]);
    const allowed = ALLOWED_EVENTS[status] || [];
    if (allowed.length) {
      const buttons = element("div", { className: "events" });
      allowed.forEach(function (type) {
        const withForm = type === "delivered" || type === "failed";
        const button = element("button", {
          type: "button",
          className: type === "failed" ? "danger" : (type === "arrived" ? "" : "primary"),
          "data-event": type,
          "data-focus-key": stop.orderId + ":" + type,
          text: EVENT_LABELS[type] + (withForm ? "\u2026" : ""),
        });
        button.addEventListener("click", function () {
          const current = stopOf(stop.orderId);
          if (!current) return;
          if (withForm) openForm(current, type);
          else takeEvent(current, type);
        });
        buttons.append(button);
      });
      card.append(buttons);
    }
    return card;
  }

  function render() {
    const signedIn = Boolean(state.token);
    byId("sign-in").hidden = signedIn;
    byId("refresh").hidden = !signedIn;
    if (!state.form) byId("route").hidden = !signedIn;
    const items = queue();
    const online = navigator.onLine;
    const network = byId("network-state");
    setText(network, online ? "Online" : "Offline");
    network.dataset.state = online ? "online" : "offline";
    const queueState = byId("queue-state");
    queueState.dataset.count = String(items.length);
    setText(queueState, !items.length ? "All events sent"
      : items.length + (items.length === 1 ? " event" : " events") +
        (online ? (state.flushing ? " sending" : " waiting to be sent") : " queued until online"));
    byId("connection").className = "connection" + (!online ? " offline" : (items.length ? " waiting" : ""));

    const route = signedIn ? state.route : null;
    const summary = byId("route-summary");
    if (!route) {
      summary.textContent = signedIn ? "Loading\u2026" : "";
      byId("stops").replaceChildren();
      byId("route-empty").hidden = true;
      return;
    }
    const stops = route.stops || [];
    const done = stops.filter(function (stop) {
      const waiting = items.filter(function (item) { return item.orderId === stop.orderId; });
      return FINISHED.indexOf(shownStatus(stop, waiting)) !== -1;
    }).length;
    summary.textContent = route.driver.name + " \u00b7 " + dayName(route.date) +
      (stops.length ? " \u00b7 " + done + " of " + stops.length + " done" : "");
    byId("route-empty").hidden = stops.length > 0;
    const focused = document.activeElement && document.activeElement.dataset
      ? document.activeElement.dataset.focusKey : null;
    byId("stops").replaceChildren.apply(byId("stops"), stops.map(function (stop) {
      return stopCard(stop, items.filter(function (item) { return item.orderId === stop.orderId; }));
    }));
    if (focused) {
      const again = document.querySelector('[data-focus-key="' + focused + '"]');
      if (again) again.focus();
    }
  }

  /* Wiring */
  byId("sign-in-form").addEventListener("submit", function (event) {
    event.preventDefault();
    const token = byId("token-input").value.trim();
    if (!token) {
      const error = byId("sign-in-error");
      error.textContent = "Enter the access token.";
      error.hidden = false;
      return;
    }
    byId("token-input").value = "";
    signIn(token);
  });

  byId("refresh").addEventListener("click", function () {
    loadRoute();
    flush();
  });

  byId("sign-out").addEventListener("click", function () {
    const waiting = queue().length;
    if (waiting && !window.confirm(waiting + " events are not sent yet and would be lost. Sign out anyway?")) {
      return;
    }
    localStorage.removeItem(KEYS.queue);
    localStorage.removeItem(KEYS.points);
    signedOut("");
  });

  window.addEventListener("online", function () {
    render();
    flush();
    loadRoute();
    sendPoints();
  });
  window.addEventListener("offline", render);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      flush();
      loadRoute();
    }
  });
  /* Another tab of the app changed the queue or the token. */
  window.addEventListener("storage", function (event) {
    if (event.key === KEYS.token) state.token = localStorage.getItem(KEYS.token);
    render();
  });

  setInterval(function () {
    if (navigator.onLine && !state.form) loadRoute();
  }, config.refreshMs);
  setInterval(sendPoints, config.locationBatchMs);

  /* The page is kept by a service worker, so the app opens without a network. */
  if ("serviceWorker" in navigator && window.isSecureContext) {
    navigator.serviceWorker.register(config.serviceWorker, { scope: "/courier/" })
      .catch(function () { /* the app works online without it */ });
  }

  renderReasons();
  renderAlerts();
  const linked = tokenFromLink();
  if (linked) signIn(linked);
  else {
    render();
    if (state.token) {
      loadRoute().then(flush);
      watchPosition();
    }
  }
})();
{% endverbatim %}
