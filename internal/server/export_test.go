package server

import "time"

// WriteTimeout and SetWriteTimeout expose the HTTP server's write timeout
// to the tests.
func WriteTimeout(s *Server) time.Duration       { return s.srv.WriteTimeout }
func SetWriteTimeout(s *Server, d time.Duration) { s.srv.WriteTimeout = d }
