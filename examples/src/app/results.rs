//! A search on the cluster, answered as a page or as Fess's API JSON.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, RETRY_AFTER};
use hyper::{Response, StatusCode};
use load_smol::Runtime;
use serde_json::json;

use super::App;
use super::routes::{html, json_response, page};
use crate::dashboard::escape;
use crate::search::{Hits, PAGE_SIZE, Search};

impl<R: Runtime + Default> App<R> {
    /// Runs `query` on the cluster and answers with the hits (HTML, or Fess's API JSON when
    /// `api`); an empty query answers at once, a failed search with 502 or 503.
    pub(super) async fn searched(
        &self,
        search: &Search,
        api: bool,
        query: &str,
    ) -> Response<Full<Bytes>> {
        let form = search_form(query);
        if query.trim().is_empty() {
            return if api {
                json_response(StatusCode::OK, &api_hits(query, 0, &[]))
            } else {
                html(StatusCode::OK, &page("Search", &form))
            };
        }
        match search.search(query).await {
            Ok(hits) => {
                if api {
                    let result: Vec<serde_json::Value> = hits
                        .hits
                        .iter()
                        .map(|hit| {
                            json!({"doc_id": hit.id, "title": hit.title, "url": hit.url,
                                   "score": hit.score, "content_description": hit.fragment()})
                        })
                        .collect();
                    json_response(StatusCode::OK, &api_hits(query, hits.total, &result))
                } else {
                    html(StatusCode::OK, &page("Search", &hits_html(&form, &hits)))
                }
            }
            Err(error) => {
                self.search_failures.failed(&error);
                let status =
                    StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::BAD_GATEWAY);
                let message = if status == StatusCode::SERVICE_UNAVAILABLE {
                    "The search engine is unavailable. Please try again later."
                } else {
                    "The search engine could not answer this search."
                };
                let mut response = if api {
                    json_response(
                        status,
                        &json!({"response": {"status": 1, "message": message}}),
                    )
                } else {
                    html(
                        status,
                        &page(
                            "Search",
                            &format!("{form}\n<p class=\"error\">{message}</p>"),
                        ),
                    )
                };
                if status == StatusCode::SERVICE_UNAVAILABLE {
                    response.headers_mut().insert(
                        RETRY_AFTER,
                        HeaderValue::from(self.config().control.retry_after),
                    );
                }
                response
            }
        }
    }
}

fn search_form(query: &str) -> String {
    format!(
        "<form action=\"/search\"><input name=\"q\" value=\"{}\"> <button>Search</button></form>",
        escape(query)
    )
}

fn hits_html(form: &str, hits: &Hits) -> String {
    let mut out = format!(
        "{form}\n<p>{} document(s), {} ms.</p>\n<ol>\n",
        hits.total, hits.took_ms
    );
    for hit in &hits.hits {
        // The address comes from the index: only a web address becomes a link.
        let web = hit.url.split_once(':').is_some_and(|(scheme, _)| {
            scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
        });
        let title = if web {
            format!(
                "<a href=\"{}\">{}</a>",
                escape(&hit.url),
                escape(&hit.title)
            )
        } else {
            escape(&hit.title)
        };
        out.push_str(&format!("<li>{title}<br>{}</li>\n", hit.fragment_html()));
    }
    out.push_str("</ol>");
    out
}

/// Fess's API answer for a page of hits.
fn api_hits(query: &str, total: u64, result: &[serde_json::Value]) -> serde_json::Value {
    json!({"response": {"status": 0, "q": query, "record_count": total, "page_size": PAGE_SIZE,
                        "result": result}})
}
