package graph

// Stats count what a graph holds, for a summary.
type Stats struct {
	Nodes int `json:"nodes"`
	Edges int `json:"edges"`
	// NodeTypes and EdgeTypes count the nodes and edges of each type that
	// the graph has (types it lacks are left out).
	NodeTypes map[NodeType]int `json:"node_types"`
	EdgeTypes map[EdgeType]int `json:"edge_types"`
	// Passages are the passages in the order their first node was added.
	Passages []PassageStats `json:"passages"`
}

// PassageStats is one passage's part of the graph.
type PassageStats struct {
	Passage
	// Main says whether the main debate's node is in the graph; Branches
	// counts the branch nodes.
	Main     bool `json:"main"`
	Branches int  `json:"branches"`
	// Missing are the passage's nodes that could not be made, with why.
	Missing []Failure `json:"missing,omitempty"`
}

// Stats counts g's nodes and edges by type and by passage.
func (g *DebateDAG) Stats() Stats {
	s := Stats{Nodes: len(g.Nodes), Edges: len(g.Edges), NodeTypes: map[NodeType]int{}, EdgeTypes: map[EdgeType]int{}, Passages: []PassageStats{}}
	at := map[string]int{}
	for _, n := range g.Nodes {
		s.NodeTypes[n.Type]++
		i, ok := at[n.Passage.ID]
		if !ok {
			i = len(s.Passages)
			at[n.Passage.ID] = i
			s.Passages = append(s.Passages, PassageStats{Passage: n.Passage})
		}
		if n.IsBranch() {
			s.Passages[i].Branches++
		} else {
			s.Passages[i].Main = true
		}
	}
	for _, e := range g.Edges {
		s.EdgeTypes[e.Type]++
	}
	// Each missing node goes to the passages whose id its id starts with,
	// followed by "/" (MissingOf, for every passage at once).
	for _, m := range g.Missing {
		for k := 0; k < len(m.ID); k++ {
			if m.ID[k] != '/' {
				continue
			}
			if i, ok := at[m.ID[:k]]; ok {
				s.Passages[i].Missing = append(s.Passages[i].Missing, m)
			}
		}
	}
	return s
}
