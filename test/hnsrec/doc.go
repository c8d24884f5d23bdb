// Package hnsrec is a recording Host Networking Service for tests: an
// in-memory model of the HNS networks, endpoints and load balancers that
// Kubernetes' Windows kernelspace proxier reads and programs through its
// HcnService interface (pkg/proxy/winkernel), which keeps every call it
// is made. The unit tests of the node's proxier wiring run over it (under
// Wine, which has no HNS), and so does the test build of edgecore.exe the
// end-to-end scenario runs (build tag e2ehns), which logs each call for
// the scenario to read. It is Windows-only, as the hcn types are; the
// release binary never links it.
package hnsrec
