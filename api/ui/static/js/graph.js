// The neighbourhood: entities reachable over facts valid at as_of, drawn with the
// vendored cytoscape.js (a classic script that defines window.cytoscape).
//
// Every node has a label (name and type) and a colour per type, so type never rests on
// colour alone; the same nodes are listed as links for keyboard and screen-reader use.

// Colour-blind-safe palette (Okabe-Ito), then greys; assigned to types in name order.
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"];

export function typeColours(types) {
  const out = new Map();
  [...new Set(types)].sort().forEach((t, i) => out.set(t, PALETTE[i % PALETTE.length]));
  return out;
}

/**
 * Draw `nb` ({entities, facts}) around `seed` into `container`; returns the cytoscape
 * instance. onOpen(entityId) opens an entity; onFocus(text) announces the keyboard focus.
 */
export function drawNeighbourhood(container, nb, { seed, colours, onOpen, onFocus }) {
  const ids = new Set(nb.entities.map((e) => e.entity_id));
  const elements = [];
  for (const e of nb.entities) {
    elements.push({
      data: {
        id: e.entity_id,
        label: `${e.name}\n${e.entity_type}`,
        colour: colours.get(e.entity_type),
        seed: e.entity_id === seed ? 1 : 0,
      },
    });
  }
  nb.facts.forEach((f, i) => {
    if (f.object && ids.has(f.subject) && ids.has(f.object)) {
      elements.push({ data: { id: `edge-${i}`, source: f.subject, target: f.object, label: f.predicate } });
    }
  });
  if (typeof window.cytoscape !== "function") {
    container.textContent = "The graph library did not load; the entities are listed below.";
    return null;
  }
  const cy = window.cytoscape({
    container,
    elements,
    autoungrabify: false,
    boxSelectionEnabled: false,
    minZoom: 0.2,
    maxZoom: 1.5, // a lone node or two stay node-sized
    style: [
      {
        selector: "node",
        style: {
          "background-color": "data(colour)",
          label: "data(label)",
          "text-wrap": "wrap",
          "text-valign": "bottom",
          "text-margin-y": 6,
          "font-size": 12,
          color: "#111",
          "text-background-color": "#fff",
          "text-background-opacity": 0.85,
          "text-background-padding": 2,
          "border-width": 2,
          "border-color": "#222",
          width: 34,
          height: 34,
        },
      },
      { selector: "node[seed = 1]", style: { "border-width": 5, width: 44, height: 44, shape: "round-rectangle" } },
      { selector: "node.focused", style: { "overlay-color": "#000", "overlay-opacity": 0.25, "overlay-padding": 8 } },
      {
        selector: "edge",
        style: {
          width: 2,
          "line-color": "#666",
          "target-arrow-color": "#666",
          "target-arrow-shape": "triangle",
          "curve-style": "bezier",
          label: "data(label)",
          "font-size": 11,
          color: "#333",
          "text-rotation": "autorotate",
          "text-background-color": "#fff",
          "text-background-opacity": 0.85,
          "text-background-padding": 2,
        },
      },
    ],
    layout: { name: "preset" },
  });
  // Roots as a collection, not a selector string: ids may hold any printable character.
  // Hops run left to right in a wide box, top to bottom in a narrow one.
  const wide = container.clientWidth > container.clientHeight;
  cy.layout({
    name: "breadthfirst",
    roots: cy.getElementById(seed),
    directed: false,
    padding: 30,
    spacingFactor: 1.2,
    nodeDimensionsIncludeLabels: true,
    transform: (_node, pos) => (wide ? { x: pos.y, y: pos.x } : pos),
  }).run();
  cy.on("tap", "node", (evt) => onOpen(evt.target.id()));
  // What is drawn, readable without the canvas (tests, assistive tools).
  container.dataset.nodes = JSON.stringify(cy.nodes().map((n) => n.id()).sort());
  container.cy = cy;
  // Keyboard: arrows move a focus ring over the nodes (in reading order), Enter opens.
  const order = () =>
    cy.nodes().sort((a, b) => a.position("y") - b.position("y") || a.position("x") - b.position("x"));
  let at = -1;
  const show = (i) => {
    const nodes = order();
    if (!nodes.length) return;
    at = (i + nodes.length) % nodes.length;
    cy.nodes().removeClass("focused");
    const n = nodes[at];
    n.addClass("focused");
    onFocus(`${n.data("label").replace("\n", ", ")}: press Enter to open`);
  };
  container.onkeydown = (e) => {
    if (["ArrowRight", "ArrowDown"].includes(e.key)) show(at + 1);
    else if (["ArrowLeft", "ArrowUp"].includes(e.key)) show(at - 1);
    else if (e.key === "Enter" && at >= 0) onOpen(order()[at].id());
    else return;
    e.preventDefault();
  };
  container.onfocus = () => {
    if (at < 0) show(0);
  };
  return cy;
}
