// Package textmatch holds the small string measures that "did you mean"
// suggestions share: the inventory's and the resolved context's.
package textmatch

// CommonPrefix is the length in bytes of the longest common prefix.
func CommonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Distance is the Levenshtein distance between two short strings, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Within reports whether the distance between a and b is at most limit,
// without computing it when the lengths already rule it out.
func Within(a, b string, limit int) bool {
	if d := len(a) - len(b); d > limit || -d > limit {
		return false
	}
	return Distance(a, b) <= limit
}
