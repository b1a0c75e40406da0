// backroom dashboard: progressive enhancement only; every page works without it.
"use strict";

// A "select all" box ticks every box of its name.
document.addEventListener("change", (event) => {
  const box = event.target;
  const name = box.dataset && box.dataset.selectAll;
  if (!name) return;
  for (const other of document.querySelectorAll(`input[type=checkbox][name="${name}"]`)) {
    other.checked = box.checked;
  }
});

// A button that deletes asks first.
document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest("button[data-confirm]");
  if (button && !window.confirm(button.dataset.confirm)) event.preventDefault();
});

// Swap the live part of the page for a fresh copy from the server.
let refreshing = false;
async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    const response = await fetch(location.href, { headers: { Accept: "text/html" } });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.getElementById("live");
    const live = document.getElementById("live");
    if (fresh && live) live.replaceWith(fresh);
  } finally {
    refreshing = false;
  }
}

// At most one refresh per interval, however many events arrive.
let pending = null;
function refreshSoon(delayMs) {
  if (pending) return;
  pending = setTimeout(() => { pending = null; refresh(); }, delayMs);
}

function showProgress(data) {
  const bar = document.getElementById("progress");
  const text = document.getElementById("progress-text");
  const partial = document.getElementById("partial");
  if (bar && typeof data.progress === "number") {
    bar.value = data.progress;
    if (text) text.textContent = `${Math.round(data.progress * 100)}%`;
  }
  if (partial && data.partial !== undefined && data.partial !== null) {
    partial.textContent = JSON.stringify(data.partial, null, 2);
  }
}

const live = document.getElementById("live");
if (live && window.EventSource) {
  const jobStream = live.dataset.liveJob;
  const feed = live.dataset.liveFeed;
  if (jobStream) {
    const source = new EventSource(jobStream);
    source.addEventListener("job.progress", (event) => {
      const data = JSON.parse(event.data);
      if (!document.getElementById("progress")) refreshSoon(0);
      else showProgress(data);
    });
    for (const type of ["job.started", "job.requeued", "job.succeeded", "job.failed", "job.cancelled", "job.redriven"]) {
      source.addEventListener(type, () => refreshSoon(150));
    }
    // The stream starts where the page was drawn and ends after the job's last event;
    // a redrive posts a form, and the page it comes back to opens a new stream.
    source.onerror = () => source.close();
  } else if (feed) {
    const source = new EventSource(feed);
    for (const type of ["job.submitted", "job.started", "job.requeued", "job.succeeded", "job.failed", "job.cancelled", "job.redriven"]) {
      source.addEventListener(type, () => refreshSoon(1000));
    }
  }
}
