package loader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// MaxResponseBytes bounds the body of any one answer of an API server
// (a page of objects, a pod): client-go reads an answer whole before
// decoding it, so a broken or hostile server (one that ignores the page's
// limit, or streams an endless body) would otherwise take unbounded
// memory. A page of livePageSize real objects is well under it (the
// real-looking pods of TestWriteBigDumps take some 6 KB of JSON each);
// a page over it is asked again in half as many objects (ListPages), down
// to one object, which the API server never stores that large (etcd takes
// 1.5 MiB by default). Decoded, an answer takes up to some 30 times its
// text: 16 MiB keeps that under half a GB.
const MaxResponseBytes = 16 << 20

// MaxListPages bounds the pages (requests) of one listing: a server that
// answers every page with a continue token would otherwise be listed
// without end. 1000 pages of livePageSize objects are half a million
// objects, more than three times Kubernetes' limits (150,000 pods).
const MaxListPages = 1000

// ResponseTooLargeError is the refusal of an answer of an API server over
// a bound: MaxResponseBytes for one answer, or the bound of LiveReads.Start
// (-max-input-bytes) for all the answers of one load.
type ResponseTooLargeError struct {
	Server      string // "the API server at https://..."
	Method, URL string // the request
	Max         int64
	Total       bool // the bound on all the load's answers
}

func (e *ResponseTooLargeError) Error() string {
	if e.Total {
		return fmt.Sprintf("%s: the answers read, up to that to %s %s, take more than %d bytes (-max-input-bytes), the bound on all a load reads from the API server; refused",
			e.Server, e.Method, e.URL, e.Max)
	}
	return fmt.Sprintf("%s: the answer to %s %s is more than %d bytes (%d MiB), the bound on one answer of the API server (client-go reads it whole; "+
		"no object the API server stores is that large, etcd takes 1.5 MiB by default); refused", e.Server, e.Method, e.URL, e.Max, e.Max>>20)
}

// LiveReads bounds what a client reads from an API server: each answer
// to MaxResponseBytes, and all the answers since Start to Start's bound.
type LiveReads struct {
	server string
	read   atomic.Int64 // since Start
	max    atomic.Int64 // 0: none
}

// BoundReads wraps cfg's transport so that every answer's body is read
// under the bounds of the LiveReads it returns; server names the API
// server in errors.
func BoundReads(cfg *rest.Config, server string) *LiveReads {
	r := &LiveReads{server: server}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return boundedTransport{rt, r} })
	return r
}

// Start begins a load: what is read from now on is bounded by max in
// total (0: only each answer is bounded).
func (r *LiveReads) Start(max int64) {
	r.read.Store(0)
	r.max.Store(max)
}

type boundedTransport struct {
	next  http.RoundTripper
	reads *LiveReads
}

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, reads: t.reads, method: req.Method, url: req.URL.RequestURI(), length: resp.ContentLength}
	return resp, nil
}

type boundedBody struct {
	io.ReadCloser
	reads       *LiveReads
	method, url string
	length      int64 // Content-Length, -1 when unknown
	n           int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.length > MaxResponseBytes || b.n > MaxResponseBytes {
		// Refused from its Content-Length, or past the bound.
		return 0, &ResponseTooLargeError{Server: b.reads.server, Method: b.method, URL: b.url, Max: MaxResponseBytes}
	}
	// One byte past the bound is read to know the answer is over it.
	if rest := MaxResponseBytes + 1 - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if b.n > MaxResponseBytes {
		// The answer is refused (ListPages asks again for less): what
		// it counted of the load's total is taken back.
		b.reads.read.Add(-(b.n - int64(n)))
		return n, &ResponseTooLargeError{Server: b.reads.server, Method: b.method, URL: b.url, Max: MaxResponseBytes}
	}
	if total := b.reads.read.Add(int64(n)); b.reads.max.Load() > 0 && total > b.reads.max.Load() {
		return n, &ResponseTooLargeError{Server: b.reads.server, Method: b.method, URL: b.url, Max: b.reads.max.Load(), Total: true}
	}
	return n, err
}

// ListPages lists with list in pages of livePageSize objects (opt's
// selectors kept), calling page on each, as kubectl does; a page whose
// answer is over MaxResponseBytes is asked again in half as many objects,
// down to one. More than MaxListPages pages are refused: server and
// resource name the listing in the error.
func ListPages(ctx context.Context, server, resource string, opt metav1.ListOptions, list func(context.Context, metav1.ListOptions) (runtime.Object, error), page func(runtime.Object) error) error {
	opt.Limit = livePageSize
	for pages := 1; ; pages++ {
		if pages > MaxListPages {
			return fmt.Errorf("%s: listing %s: more than %d pages (of at most %d objects each) without an end: the server keeps answering with a continue token; refused", server, resource, MaxListPages, livePageSize)
		}
		obj, err := list(ctx, opt)
		var tl *ResponseTooLargeError
		if errors.As(err, &tl) && !tl.Total && opt.Limit > 1 {
			opt.Limit /= 2
			continue
		}
		if err != nil {
			return err
		}
		if err := page(obj); err != nil {
			return err
		}
		lm, err := meta.ListAccessor(obj)
		if err != nil || lm.GetContinue() == "" {
			return nil
		}
		opt.Continue = lm.GetContinue()
	}
}

// LiveError is err, or the ResponseTooLargeError it wraps: client-go
// wraps the error of reading a body in words ("Please retry") that would
// mislead, and the refusal names the server and the request itself.
func LiveError(err error) error {
	var tl *ResponseTooLargeError
	if errors.As(err, &tl) {
		return tl
	}
	return err
}
