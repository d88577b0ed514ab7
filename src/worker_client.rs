//! The page's side of the import worker (`crates/vramfit-worker`; messages in the
//! `vramfit-protocol` crate).
//!
//! The worker is a second WebAssembly module, started on the first request, so the first
//! load carries none of its code. Its hashed file name comes from the
//! `<meta name="vramfit-worker">` that `scripts/module_files.py` writes into index.html at
//! build time (which also lets the service worker pre-cache it for offline use).
//! Every request hears its progress lines and then exactly one answer; if the worker cannot
//! start or stops, every open request is answered with that error and the next request
//! starts a fresh worker.
//!
//! This client, with the deserializers of the worker's answers (the import and OOM reports),
//! is a chunk of the page's wasm of its own ([`send_split`], `scripts/page_wasm.py`): only a
//! drop of files, a Hugging Face import or the OOM view needs it, so the first result does not
//! wait for its bytes. [`request`] fetches it on the first request; a chunk that does not
//! come answers that request with [`NO_CLIENT`].

use js_sys::{Object, Reflect};
use leptos::prelude::{GetValue, SetValue, StoredValue};
use leptos::wasm_split::{wasm_split, SplitLoaderError};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
pub use vramfit_protocol::Reply;
use vramfit_protocol::Request;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Event, MessageEvent, Worker};

/// The error shown if the worker answers a request with another request's answer (it never
/// does: each request has one answer type).
pub const OTHER_ANSWER: &str = "the import worker answered another request";

/// The answer to a request when the client's chunk could not be fetched or started.
pub const NO_CLIENT: &str =
    "the import worker's client could not be downloaded; check the connection, then try again";

type Handler = Rc<dyn Fn(Reply)>;

struct Client {
    worker: Worker,
    next_id: u32,
    pending: HashMap<u32, Handler>,
    /// Set when the worker failed: the next request replaces it (its closures are dropped
    /// then, not while one of them runs).
    broken: bool,
    _on_message: Closure<dyn Fn(MessageEvent)>,
    _on_error: Closure<dyn Fn(Event)>,
}

thread_local! {
    static CLIENT: RefCell<Option<Client>> = const { RefCell::new(None) };
}

/// The `content` of the `<meta>` that `selector` finds in index.html: the build hooks name
/// content-hashed files there (the worker's loader, the catalog's sources).
pub(crate) fn meta_content(selector: &str) -> Option<String> {
    web_sys::window()?
        .document()?
        .query_selector(selector)
        .ok()??
        .get_attribute("content")
}

/// Takes the handler of `id` out (the last reply) or clones it (progress), without holding
/// the client while the handler runs: a handler may send the next request.
fn handler(id: u32, last: bool) -> Option<Handler> {
    CLIENT.with(|c| {
        let mut c = c.borrow_mut();
        let client = c.as_mut()?;
        if last {
            client.pending.remove(&id)
        } else {
            client.pending.get(&id).cloned()
        }
    })
}

fn on_message(ev: &MessageEvent) {
    let data = ev.data();
    // OK because: ids are u32 counters sent by this module and echoed back.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let Some(id) = Reflect::get(&data, &"id".into())
        .ok()
        .and_then(|v| v.as_f64())
        .map(|v| v as u32)
    else {
        return;
    };
    let field = |k: &str| {
        Reflect::get(&data, &k.into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    let reply = Reply::from_parts(&field("kind"), field("text"))
        .unwrap_or_else(|e| Reply::Failed(format!("the import worker's answer did not read: {e}")));
    if let Some(h) = handler(id, reply.is_last()) {
        h(reply);
    }
}

/// The worker could not load or stopped: every open request gets the error. A script that
/// failed to load fires a plain `Event`; an exception inside the worker an `ErrorEvent`
/// with a `message`.
fn on_error(ev: &Event) {
    let why = match Reflect::get(ev, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
    {
        Some(m) if !m.is_empty() => m,
        _ => "it could not be loaded (offline before its first use?)".to_string(),
    };
    let open: Vec<Handler> = CLIENT.with(|c| {
        let mut c = c.borrow_mut();
        let Some(client) = c.as_mut() else {
            return Vec::new();
        };
        client.broken = true;
        client.worker.terminate();
        client.pending.drain().map(|(_, h)| h).collect()
    });
    for h in open {
        h(Reply::Failed(format!("the import worker stopped: {why}")));
    }
}

fn start() -> Result<Client, String> {
    let url = meta_content("meta[name=vramfit-worker]")
        .ok_or("this build has no import worker (index.html names none)")?;
    let worker =
        Worker::new(&url).map_err(|e| format!("could not start the import worker: {e:?}"))?;
    let on_msg = Closure::<dyn Fn(MessageEvent)>::new(|ev: MessageEvent| on_message(&ev));
    let on_err = Closure::<dyn Fn(Event)>::new(|ev: Event| on_error(&ev));
    worker.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_err.as_ref().unchecked_ref()));
    Ok(Client {
        worker,
        next_id: 0,
        pending: HashMap::new(),
        broken: false,
        _on_message: on_msg,
        _on_error: on_err,
    })
}

/// Sends `{id, request, files}` to the worker (starting it if needed): `request` the JSON
/// of `req`, `files` the `File`s of [`Request::ImportFiles`]. `on` hears the progress lines
/// and then one answer or `Failed`.
fn send(req: &Request, files: Option<&js_sys::Array>, on: Handler) {
    let sent = CLIENT.with(|c| -> Result<(), String> {
        let text = req.to_json();
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|cl| cl.broken) {
            *c = Some(start()?);
        }
        let Some(client) = c.as_mut() else {
            return Err("the import worker is not running".into());
        };
        client.next_id = client.next_id.wrapping_add(1);
        let id = client.next_id;
        let msg = Object::new();
        let _ = Reflect::set(&msg, &"id".into(), &id.into());
        let _ = Reflect::set(&msg, &"request".into(), &text.into());
        if let Some(files) = files {
            let _ = Reflect::set(&msg, &"files".into(), files);
        }
        client
            .worker
            .post_message(&msg)
            .map_err(|e| format!("could not send the request to the import worker: {e:?}"))?;
        client.pending.insert(id, Rc::clone(&on));
        Ok(())
    });
    if let Err(e) = sent {
        on(Reply::Failed(e));
    }
}

/// One request on its way to the chunk: a thin pointer across the split point's call.
pub struct Outgoing {
    req: Request,
    files: Option<js_sys::Array>,
    on: Handler,
}

/// The split point (chunk `worker_client`): everything [`send`] reaches leaves the main chunk.
// OK because: the box is the point; on wasm the call crosses the split as one thin pointer.
#[allow(clippy::boxed_local)]
#[wasm_split(worker_client, fallible, wasm_split_path = ::leptos::wasm_split)]
pub fn send_split(out: Box<Outgoing>) -> Result<(), SplitLoaderError> {
    send(&out.req, out.files.as_ref(), out.on);
    Ok(())
}

/// Sends `req` (and, for [`Request::ImportFiles`], its `File`s) to the worker, fetching the
/// client's chunk and starting the worker if needed. `on` hears the progress lines and then
/// one answer or `Failed`; never during this call (the chunk's fetch comes first).
pub fn request(req: &Request, files: Option<&js_sys::Array>, on: impl Fn(Reply) + 'static) {
    let on: Handler = Rc::new(on);
    let out = Box::new(Outgoing {
        req: req.clone(),
        files: files.cloned(),
        on: Rc::clone(&on),
    });
    leptos::task::spawn_local(async move {
        if send_split(out).await.is_err() {
            on(Reply::Failed(NO_CLIENT.to_string()));
        }
    });
}

/// Requests that supersede one another (a message being typed, the latest drop of files):
/// only the newest request's replies are delivered.
#[derive(Clone, Copy)]
pub struct Latest(StoredValue<u32>);

impl Default for Latest {
    fn default() -> Self {
        Self(StoredValue::new(0))
    }
}

impl Latest {
    /// Drops the pending request's replies, if one is pending; returns the new generation.
    pub fn cancel(self) -> u32 {
        let generation = self.0.get_value().wrapping_add(1);
        self.0.set_value(generation);
        generation
    }

    /// [`request`], superseding the previous one.
    pub fn request(
        self,
        req: &Request,
        files: Option<&js_sys::Array>,
        on: impl Fn(Reply) + 'static,
    ) {
        let generation = self.cancel();
        request(req, files, move |reply| {
            if self.0.get_value() == generation {
                on(reply);
            }
        });
    }
}
