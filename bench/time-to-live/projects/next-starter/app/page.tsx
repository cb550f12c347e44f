export default function Home() {
  return <main>To get started, edit the page.tsx file.</main>;
}
