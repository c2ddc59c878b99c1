{% verbatim %}
/* The courier app's service worker (docs/contract.md "The courier web app"): the page itself is
   kept, so the app opens without a network; everything else, the API above all, goes to the
   network untouched. The page is read from the network first, so a new version comes in at
   once whenever there is one. */
"use strict";

const CACHE = "courier-app-1";
const PAGE = "/courier/";

self.addEventListener("install", function (event) {
  event.waitUntil(
    caches.open(CACHE)
      .then(function (cache) { return cache.add(PAGE); })
      .then(function () { return self.skipWaiting(); })
  );
});

self.addEventListener("activate", function (event) {
  event.waitUntil(
    caches.keys()
      .then(function (names) {
        return Promise.all(names.filter(function (name) { return name !== CACHE; })
          .map(function (name) { return caches.delete(name); }));
      })
      .then(function () { return self.clients.claim(); })
  );
});

self.addEventListener("fetch", function (event) {
  const request = event.request;
  const path = new URL(request.url).pathname;
  if (request.mode !== "navigate" || (path !== "/courier/" && path !== "/courier")) return;
  event.respondWith(
    fetch(request)
      .then(function (response) {
        if (response.ok) {
          const copy = response.clone();
          caches.open(CACHE).then(function (cache) { return cache.put(PAGE, copy); });
        }
        return response;
      })
      .catch(function () {
        return caches.match(PAGE).then(function (kept) { return kept || Response.error(); });
      })
  );
});
{% endverbatim %}
