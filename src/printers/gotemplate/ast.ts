/** Nodes of a parsed Go text/template, printed back the way Go's parse package prints them. */

export type Node =
  | { type: 'list'; pos: number; nodes: Node[] }
  | { type: 'text'; pos: number; text: string }
  | { type: 'comment'; pos: number }
  | { type: 'action'; pos: number; pipe: PipeNode }
  | PipeNode
  | CommandNode
  | { type: 'field'; pos: number; ident: string[] }
  | { type: 'chain'; pos: number; node: Node; field: string[] }
  | { type: 'identifier'; pos: number; ident: string }
  | { type: 'variable'; pos: number; ident: string[] }
  | { type: 'dot'; pos: number }
  | { type: 'nil'; pos: number }
  | { type: 'bool'; pos: number; value: boolean }
  | { type: 'number'; pos: number; text: string; value: number | bigint; isFloat: boolean }
  | { type: 'string'; pos: number; quoted: string; text: string }
  | { type: 'if' | 'range' | 'with'; pos: number; pipe: PipeNode; list: ListNode; elseList: ListNode | null }
  | { type: 'break' | 'continue'; pos: number }
  | { type: 'template'; pos: number; name: string; pipe: PipeNode | null };

export type ListNode = Extract<Node, { type: 'list' }>;
export type ControlNode = Extract<Node, { type: 'if' | 'range' | 'with' }>;
export interface PipeNode {
  type: 'pipe';
  pos: number;
  isAssign: boolean;
  decl: Extract<Node, { type: 'variable' }>[];
  cmds: CommandNode[];
}
export interface CommandNode {
  type: 'command';
  pos: number;
  args: Node[];
}

export function nodeString(n: Node): string {
  switch (n.type) {
    case 'list': return n.nodes.map(nodeString).join('');
    case 'text': return n.text;
    case 'comment': return '{{/* */}}';
    case 'action': return `{{${nodeString(n.pipe)}}}`;
    case 'pipe': {
      const decl = n.decl.length ? n.decl.map(nodeString).join(', ') + (n.isAssign ? ' = ' : ' := ') : '';
      return decl + n.cmds.map(nodeString).join(' | ');
    }
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'field': return '.' + n.ident.join('.');
    case 'chain': {
      const base = n.node.type === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node);
      return base + n.field.map((f) => '.' + f).join('');
    }
    case 'identifier': return n.ident;
    case 'variable': return n.ident.join('.');
    case 'dot': return '.';
    case 'nil': return 'nil';
    case 'bool': return n.value ? 'true' : 'false';
    case 'number': return n.text;
    case 'string': return n.quoted;
    case 'if':
    case 'range':
    case 'with': {
      const head = `{{${n.type} ${nodeString(n.pipe)}}}${nodeString(n.list)}`;
      return n.elseList ? `${head}{{else}}${nodeString(n.elseList)}{{end}}` : `${head}{{end}}`;
    }
    case 'break': return '{{break}}';
    case 'continue': return '{{continue}}';
    case 'template': return n.pipe ? `{{template "${n.name}" ${nodeString(n.pipe)}}}` : `{{template "${n.name}"}}`;
  }
}
